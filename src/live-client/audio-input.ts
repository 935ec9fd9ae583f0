/**
 * Audio for a live stream, as OpenAI's realtime clients send it: 24 kHz 16-bit little-endian mono PCM
 * in 100-ms pieces. From a microphone (ffmpeg reading PulseAudio or ALSA), which is real time by
 * itself, or from any file ffmpeg reads, decoded and fed at real-time pace (or `pace` times faster).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'

export const STREAM_RATE = 24_000
/** 100 ms of 24 kHz pcm16: what each input_audio_buffer.append carries */
const PIECE_BYTES = (STREAM_RATE / 10) * 2

/** An ffmpeg input: `-f format -i name`. */
export interface CaptureDevice {
  format: string
  name: string
}

/**
 * The microphone ffmpeg records when --device is not given: PulseAudio's default source when a
 * PulseAudio (or PipeWire's pulse) server is there to answer, else ALSA's `default`.
 */
export function defaultDevice(env: Record<string, string | undefined>): CaptureDevice {
  const runtime = env.XDG_RUNTIME_DIR
  const pulse = Boolean(env.PULSE_SERVER) || (runtime !== undefined && existsSync(join(runtime, 'pulse', 'native')))
  return pulse ? { format: 'pulse', name: 'default' } : { format: 'alsa', name: 'default' }
}

/**
 * --device FORMAT:NAME (`pulse:default`, `pulse:alsa_input.usb-…`, `alsa:hw:1,0`, or any input device
 * ffmpeg has, such as `lavfi:…`); a bare name is a PulseAudio source.
 */
export function parseDevice(value: string): CaptureDevice {
  const colon = value.indexOf(':')
  if (colon <= 0) return { format: 'pulse', name: value }
  return { format: value.slice(0, colon), name: value.slice(colon + 1) }
}

export const fileInput = (path: string) => ['-i', path]
export const deviceInput = (device: CaptureDevice) => ['-f', device.format, '-i', device.name]

/** ffmpeg could not give audio: the file or device cannot be read (its message says why and what to do). */
export class AudioInputError extends Error {}

export interface AudioSource {
  /** the audio in 100-ms pieces until it ends or `signal` aborts (which stops ffmpeg) */
  pieces(signal: AbortSignal): AsyncGenerator<Uint8Array>
}

const lastLines = (text: string) => text.trim().split('\n').slice(-3).join(' ').slice(0, 400)

/**
 * ffmpeg reading `input` (file or device) as 24 kHz pcm16 mono, started and read up to its first
 * piece before anything else, so that a file or a microphone that cannot be read fails here, before
 * a stream is opened. ffmpeg runs in a process group of its own: the terminal's Ctrl+C reaches this
 * process, which ends the stream in order, and not ffmpeg directly.
 */
export async function openAudio(ffmpeg: string, input: string[], what: string): Promise<AudioSource> {
  const proc = Bun.spawn([ffmpeg, '-nostdin', '-hide_banner', '-loglevel', 'error', ...input, '-vn', '-f', 's16le', '-acodec', 'pcm_s16le', '-ac', '1', '-ar', String(STREAM_RATE), 'pipe:1'], {
    stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', detached: true,
  })
  const stderr = new Response(proc.stderr).text()
  const source = pieces(proc.stdout)
  const first = await source.next()
  if (first.done) {
    await proc.exited
    throw new AudioInputError(`ffmpeg could not read ${what}${proc.exitCode === 0 ? ': it holds no audio' : `: ${lastLines(await stderr) || `exit code ${proc.exitCode}`}`}`)
  }
  return {
    async *pieces(signal) {
      const stop = () => proc.kill()
      signal.addEventListener('abort', stop)
      try {
        if (signal.aborted) return
        yield first.value
        for await (const piece of source) {
          if (signal.aborted) return
          yield piece
        }
        if ((await proc.exited) !== 0 && !signal.aborted) throw new AudioInputError(`ffmpeg stopped reading ${what}: ${lastLines(await stderr) || `exit code ${proc.exitCode}`}`)
      } finally {
        signal.removeEventListener('abort', stop)
        if (proc.exitCode === null) proc.kill()
      }
    },
  }
}

/** The bytes of `stream` in pieces of exactly `size` bytes, the last one shorter (whole samples). */
async function* pieces(stream: ReadableStream<Uint8Array>, size = PIECE_BYTES): AsyncGenerator<Uint8Array> {
  let held = new Uint8Array(0)
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    const joined = new Uint8Array(held.length + chunk.length)
    joined.set(held)
    joined.set(chunk, held.length)
    let at = 0
    for (; joined.length - at >= size; at += size) yield joined.slice(at, at + size)
    held = joined.slice(at)
  }
  const whole = held.length - (held.length % 2)
  if (whole > 0) yield held.slice(0, whole)
}

function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })
}

/**
 * The pieces at real-time pace (times `pace`): piece k when k × 100 ms / pace have passed since the
 * first. Stops early when `signal` aborts.
 */
export async function* paced(source: AsyncIterable<Uint8Array>, pace: number, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  const start = performance.now()
  let sentMs = 0
  for await (const piece of source) {
    const wait = start + sentMs / pace - performance.now()
    if (wait > 0) await sleepUnlessAborted(wait, signal)
    if (signal.aborted) return
    yield piece
    sentMs += (piece.length / 2 / STREAM_RATE) * 1000
  }
}
