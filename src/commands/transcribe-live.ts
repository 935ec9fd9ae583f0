import { existsSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { STYLE_IDS } from '../engines/llm/engine'
import { findMediaTools } from '../engines/media/ffmpeg'
import { AudioInputError, defaultDevice, deviceInput, fileInput, openAudio, paced, parseDevice, type AudioSource } from '../live-client/audio-input'
import { createLivePrinter, type LivePrinter } from '../live-client/live-printer'
import { runLiveStream, type LiveOutcome } from '../live-client/live-stream'
import { StreamRefused } from '../live-client/realtime-connection'
import { writeStderr, writeStdout } from '../std-streams'
import { stringFlag, UsageError, type Parsed } from './args'
import type { CommandContext } from './command'
import { InputError } from './failure'

/** The most --pace may speed a file up: past that the server's limits, not the command, set the pace. */
const MAX_PACE = 20

/** The server's address: --url, else NOTESVC_PUBLIC_URL (the address this installation's clients use). */
function serverUrl(p: Parsed, publicUrl: string): string {
  const url = stringFlag(p, 'url') ?? publicUrl
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--url ${url} is not a URL; give the server's address, e.g. --url http://127.0.0.1:8080`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http:// or https:// address, not ${url}`)
  return parsed.origin
}

function paceOf(p: Parsed): number {
  const raw = stringFlag(p, 'pace')
  if (raw === undefined) return 1
  const pace = Number(raw)
  if (!(pace > 0 && pace <= MAX_PACE)) throw new UsageError(`--pace is how many times faster than real time the file is fed, from 0 to ${MAX_PACE} (default 1); not ${raw}`)
  return pace
}

function checkFlags(p: Parsed) {
  if (p.flags.live !== undefined && p.flags.realtime !== undefined) throw new UsageError('--live records the microphone and --realtime FILE feeds a file; give one of them')
  if (p.positional.length > 1) throw new UsageError(`transcribe --live/--realtime takes no file argument (the file is --realtime FILE); got ${p.positional.slice(1).join(' ')}`)
  for (const flag of ['format', 'summary']) {
    if (p.flags[flag] !== undefined) throw new UsageError(`--${flag} is for a file transcribed without a server; a live stream prints its lines as they come and the server makes the note (its summary style: --style)`)
  }
  if (p.flags.live !== undefined && p.flags.pace !== undefined) throw new UsageError('--pace is for --realtime FILE; a microphone is real time by itself')
  if (p.flags.realtime !== undefined && p.flags.device !== undefined) throw new UsageError('--device chooses the microphone of --live; --realtime reads its FILE')
  const style = stringFlag(p, 'style')
  if (style !== undefined && !(STYLE_IDS as readonly string[]).includes(style)) throw new UsageError(`--style must be one of ${STYLE_IDS.join(', ')}`)
  const language = stringFlag(p, 'language')
  if (language !== undefined && !/^[a-z]{2}$/i.test(language)) throw new UsageError('--language takes a two-letter ISO 639-1 code such as en (leave it out to let the server choose)')
}

/** The audio: the file decoded and paced, or the microphone (real time by itself); opened before the stream. */
async function openSource(p: Parsed, ffmpeg: string, env: Record<string, string | undefined>, printer: LivePrinter) {
  const file = stringFlag(p, 'realtime')
  if (file !== undefined) {
    if (!existsSync(file) || !statSync(file).isFile()) throw new InputError(`${file}: no such file; give --realtime a recording ffmpeg reads (wav, mp3, m4a, a video…)`)
    const pace = paceOf(p)
    let source: AudioSource
    try {
      source = await openAudio(ffmpeg, fileInput(file), file)
    } catch (err) {
      if (err instanceof AudioInputError) throw new InputError(`${err.message}; give --realtime an audio or video file`)
      throw err
    }
    if (pace !== 1) printer.notice(`Feeding ${file} at ${pace}x real time (--pace).`)
    return { audio: (signal: AbortSignal) => paced(source.pieces(signal), pace, signal), title: basename(file) }
  }
  const chosen = stringFlag(p, 'device')
  const device = chosen !== undefined ? parseDevice(chosen) : defaultDevice(env)
  const named = `${device.format}:${device.name}`
  const choose = 'choose one with --device pulse:SOURCE (`pactl list short sources`) or --device alsa:DEVICE (`arecord -L`)'
  let source: AudioSource
  try {
    source = await openAudio(ffmpeg, deviceInput(device), `the microphone ${named}`)
  } catch (err) {
    if (err instanceof AudioInputError) throw new Error(`${err.message}; ${choose}`)
    throw err
  }
  printer.notice(`Microphone: ${named}${chosen === undefined ? ` (${device.format === 'pulse' ? 'PulseAudio/PipeWire is running' : 'no PulseAudio server found'}); ${choose}` : ''}.`)
  return { audio: (signal: AbortSignal) => source.pieces(signal), title: undefined }
}

function report(outcome: LiveOutcome, server: string, printer: LivePrinter): number {
  if (outcome.kind === 'no-note') return 0
  if (outcome.kind === 'left') {
    printer.notice(outcome.stream
      ? `Left without waiting: the server makes note ${outcome.stream.note_id} from the audio it received; follow it with GET ${server}/v1/notes/${outcome.stream.note_id}/status.`
      : 'Left before the server confirmed the stream; nothing may have been kept.')
    return 130
  }
  const { note } = outcome
  const absolute = (path: string) => (/^https?:\/\//.test(path) ? path : `${server}${path}`)
  printer.notice(`Note ${note.id} (${note.status}), ${outcome.audioSeconds.toFixed(1)} s of audio, ${outcome.creditsCharged} credit${outcome.creditsCharged === 1 ? '' : 's'}: ${absolute(note.page)}`)
  printer.notice(`Follow it: curl -H "Authorization: Bearer $NOTESVC_KEY" ${absolute(note.url)}/status`)
  return 0
}

/**
 * `transcribe --live [--device D]` and `transcribe --realtime FILE [--pace N]`: a live stream to a
 * server (GET /v1/realtime), partials in place and final lines with their times as they come; the
 * server makes the note at the end. Ctrl+C ends the stream and waits for the note; a second leaves.
 */
export async function transcribeLive({ args: p, config, env }: CommandContext): Promise<number> {
  checkFlags(p)
  const server = serverUrl(p, config.publicUrl)
  const key = env.NOTESVC_KEY
  if (!key) throw new UsageError(`set NOTESVC_KEY to an API key of the server at ${server} (\`notesvc keys create --email you@example.com\` run there prints one)`)
  const ffmpeg = findMediaTools(config).ffmpeg
  if (!ffmpeg) throw new Error('a live stream needs ffmpeg to read the microphone or the file; install it with: apt-get install ffmpeg (or set NOTESVC_FFMPEG)')
  const printer = createLivePrinter(
    { write: writeStdout, isTTY: Boolean(process.stdout.isTTY) },
    { write: writeStderr, isTTY: Boolean(process.stderr.isTTY), columns: process.stderr.columns },
  )
  const { audio, title } = await openSource(p, ffmpeg, env, printer)
  const stop = new AbortController()
  const quit = new AbortController()
  const interrupt = () => {
    if (stop.signal.aborted) return quit.abort()
    printer.notice('Ending the stream; waiting for the note (Ctrl+C again to leave without waiting).')
    stop.abort()
  }
  process.on('SIGINT', interrupt)
  process.on('SIGTERM', interrupt)
  try {
    const outcome = await runLiveStream({
      server, key, audio, printer, stop: stop.signal, quit: quit.signal,
      query: { style: stringFlag(p, 'style'), title: stringFlag(p, 'title') ?? title },
      language: stringFlag(p, 'language')?.toLowerCase() ?? null,
    })
    return report(outcome, server, printer)
  } catch (err) {
    if (err instanceof StreamRefused && (err.status === 401 || err.status === 403)) throw new InputError(err.message)
    throw err
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}
