import { basename } from 'node:path'
import type { Config } from '../config'
import { commandLine } from '../command-name'
import { createAsrSelector } from '../engines/asr'
import { createLlmSelector } from '../engines/llm'
import { STYLE_IDS, type StyleId } from '../engines/llm/engine'
import { findMediaTools } from '../engines/media/ffmpeg'
import { formatTranscript, TRANSCRIPT_FORMATS, type TranscriptDocument, type TranscriptFormat } from '../formats/transcript'
import { LocalTranscribeError, transcribeFile } from '../local/transcribe'
import { createProgressBar } from '../progress'
import { stringFlag, UsageError, type Parsed } from './args'
import type { CommandContext } from './command'
import { InputError } from './failure'
import { transcribeLive } from './transcribe-live'

/**
 * `transcribe FILE [--format F] [--summary] [--style S] [--language L]`, or a live stream to a server:
 * `transcribe --live` (the microphone) and `transcribe --realtime FILE` (transcribe-live.ts).
 */
export function transcribeCommand(ctx: CommandContext): Promise<number> {
  const { args, config } = ctx
  if (args.flags.live !== undefined || args.flags.realtime !== undefined) return transcribeLive(ctx)
  return transcribe(config, args, args.positional[1])
}

/** The summary style `transcribe` was asked for: --style S (which implies --summary), --summary alone → note, else none. */
function summaryStyle(p: Parsed): StyleId | null {
  const style = stringFlag(p, 'style')
  const summary = p.flags.summary
  if (summary !== undefined && summary !== true) throw new UsageError(`--summary takes no value (the style is --style ${STYLE_IDS.join('|')})`)
  if (style === undefined) return summary ? 'note' : null
  if (!(STYLE_IDS as readonly string[]).includes(style)) throw new UsageError(`--style must be one of ${STYLE_IDS.join(', ')}`)
  return style as StyleId
}

/** A summary in plain text, before the transcript: its title, the summary, then the transcript under a rule. */
function txtWithSummary(doc: TranscriptDocument): string {
  const s = doc.summary!
  return `${s.title}\n\n${s.summary.trim()}\n\n---\n\n${doc.transcript}\n`
}

/**
 * `transcribe FILE`: the engines the server would use (NOTESVC_ASR, NOTESVC_LLM, the media tools), on
 * one local file, without a server or a database. The result on stdout, progress on stderr.
 */
async function transcribe(config: Config, p: Parsed, file: string | undefined): Promise<number> {
  if (!file) throw new UsageError(`name the file to transcribe: ${commandLine('transcribe talk.m4a --format srt')}`)
  if (p.positional.length > 2) throw new UsageError(`transcribe takes one file; got ${p.positional.length - 1} (${p.positional.slice(1).join(' ')})`)
  const format = (stringFlag(p, 'format') ?? 'txt') as TranscriptFormat
  if (!TRANSCRIPT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${TRANSCRIPT_FORMATS.join(', ')}`)
  const styleId = summaryStyle(p)
  if (styleId && (format === 'srt' || format === 'vtt')) throw new UsageError(`subtitles have no place for a summary; use --format json or txt with --summary/--style`)
  const language = stringFlag(p, 'language') ?? null
  if (language !== null && !/^[a-z]{2}$/i.test(language)) throw new UsageError('--language takes a two-letter ISO 639-1 code such as en or de (leave it out to detect the language)')

  const asr = createAsrSelector(config).current()
  const llm = createLlmSelector(config)
  const bar = createProgressBar(basename(file), undefined, undefined, 'seconds')
  let last: Parameters<typeof bar.update>[0] = { received: 0, total: null }
  // a terminal sees the bar move (elapsed rate) between chunks, which take minutes on long files
  const tick = process.stderr.isTTY ? setInterval(() => bar.update(last), 1000) : null
  const controller = new AbortController()
  const interrupt = () => controller.abort(new Error('interrupted'))
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)
  try {
    const doc = await transcribeFile(file, { asr, tools: findMediaTools(config), llm: () => llm.current() }, {
      language,
      styleId,
      signal: controller.signal,
      onProgress: ({ seconds, total, stage }) => {
        if (stage === 'summarizing') {
          bar.update({ received: total ?? seconds, total: total ?? seconds })
          bar.done()
          process.stderr.write(`summarizing (${styleId})…\n`)
          return
        }
        last = { received: seconds, total }
        bar.update(last)
      },
    })
    if (!styleId) bar.update({ received: doc.duration ?? 0, total: doc.duration })
    bar.done()
    process.stdout.write(format === 'txt' && doc.summary ? txtWithSummary(doc) : formatTranscript(format, doc))
    return 0
  } catch (err) {
    bar.done()
    if (controller.signal.aborted) {
      process.stderr.write('notesvc: interrupted; nothing was written\n')
      return 130
    }
    if (err instanceof LocalTranscribeError) {
      if (err.kind === 'input') throw new InputError(err.message)
      throw new Error(err.message)
    }
    throw err
  } finally {
    if (tick) clearInterval(tick)
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
  }
}
