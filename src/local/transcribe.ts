import { statSync } from 'node:fs'
import { transcribeMedia } from '../engines/asr/chunked'
import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine } from '../engines/asr/engine'
import { missingSpeechEngine } from '../engines/asr'
import { LlmRefusalError, LlmUnavailableError, type LlmEngine, type StyleId } from '../engines/llm/engine'
import { summarizeLong } from '../engines/llm/summarize'
import { mediaDuration } from '../engines/media/decode'
import { MediaToolMissingError, MediaUnreadableError } from '../engines/media/errors'
import type { MediaTools } from '../engines/media/ffmpeg'
import type { TranscriptDocument } from '../formats/transcript'

/**
 * Transcribing one local file with the engines the server uses, with no server and no database: the
 * file is decoded and transcribed by `transcribeMedia` (the upload pipeline's own path), then, when a
 * style is given, summarized by `summarizeLong` as the pipeline does.
 */

/** What went wrong, for the user: `input` (the file: fix the path or convert it) or `engine` (install or configure one). */
export class LocalTranscribeError extends Error {
  constructor(readonly kind: 'input' | 'engine', message: string) {
    super(message)
  }
}

export interface LocalTranscribeDeps {
  asr: AsrEngine
  tools: MediaTools
  /** the summary engine; asked for only when a style is given */
  llm: () => Promise<LlmEngine>
}

interface TranscribeProgress {
  /** seconds of the recording transcribed so far */
  seconds: number
  /** the recording's length in seconds, or null when it cannot be told before decoding */
  total: number | null
  /** the stage under way */
  stage: 'transcribing' | 'summarizing'
}

export interface LocalTranscribeOptions {
  /** ISO 639-1 code, or null to let the engine detect it */
  language?: string | null
  /** summarize in this style too */
  styleId?: StyleId | null
  signal?: AbortSignal
  onProgress?: (p: TranscribeProgress) => void
}

/** The file must exist and be a regular file: said before any engine is started. */
function checkFile(path: string) {
  let stat
  try {
    stat = statSync(path)
  } catch {
    throw new LocalTranscribeError('input', `no such file: ${path}; check the path (it is read relative to ${process.cwd()})`)
  }
  if (!stat.isFile()) throw new LocalTranscribeError('input', `${path} is not a file; give the path of an audio or video file`)
  if (stat.size === 0) throw new LocalTranscribeError('input', `${path} is empty; give the path of an audio or video file`)
}

/**
 * The engine as given, reporting each chunk's seconds as it finishes: progress counted from what the
 * engine has heard, whatever order or concurrency `transcribeMedia` hands chunks in. (Seam: when
 * `transcribeMedia` reports progress itself, pass its callback instead of wrapping the engine.)
 * A Proxy, so that anything else the engine offers reaches it unchanged.
 */
function countingEngine(asr: AsrEngine, onChunk: (seconds: number) => void): AsrEngine {
  const transcribeChunk: AsrEngine['transcribeChunk'] = async (samples, opts) => {
    const r = await asr.transcribeChunk(samples, opts)
    onChunk(samples.length / SAMPLE_RATE)
    return r
  }
  return new Proxy(asr, {
    get(target, prop) {
      if (prop === 'transcribeChunk') return transcribeChunk
      const value = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Transcribes (and, with a style, summarizes) the media file at `path`. */
export async function transcribeFile(path: string, deps: LocalTranscribeDeps, opts: LocalTranscribeOptions = {}): Promise<TranscriptDocument> {
  checkFile(path)
  const missing = missingSpeechEngine(deps.asr)
  if (missing) throw new LocalTranscribeError('engine', missing)
  try {
    await deps.asr.ready()
  } catch (err) {
    if (err instanceof AsrUnavailableError) throw new LocalTranscribeError('engine', err.message)
    throw err
  }

  const total = await mediaDuration(path, deps.tools).catch(() => null)
  let heard = 0
  const report = (stage: TranscribeProgress['stage']) => opts.onProgress?.({ seconds: heard, total, stage })
  report('transcribing')
  const asr = countingEngine(deps.asr, seconds => {
    heard += seconds
    report('transcribing')
  })

  let result
  try {
    result = await transcribeMedia(path, { asr, tools: deps.tools }, { language: opts.language ?? null, signal: opts.signal })
  } catch (err) {
    if (opts.signal?.aborted) throw err
    if (err instanceof MediaUnreadableError) {
      throw new LocalTranscribeError('input', `${path} could not be read as audio or video (${err.message}); check that it is a recording, or convert it, e.g. ffmpeg -i ${JSON.stringify(path)} out.wav`)
    }
    if (err instanceof MediaToolMissingError) throw new LocalTranscribeError('engine', err.message)
    if (err instanceof AsrUnavailableError) throw new LocalTranscribeError('engine', err.message)
    throw err
  }
  const duration = total ?? heard
  const doc: TranscriptDocument = { language: result.language, duration, transcript: result.transcript, segments: result.segments }
  if (!opts.styleId) return doc

  report('summarizing')
  let summary
  try {
    summary = await summarizeLong(await deps.llm(), { text: result.transcript, styleId: opts.styleId, segments: result.segments, language: result.language }, opts.signal)
  } catch (err) {
    if (err instanceof LlmUnavailableError || err instanceof LlmRefusalError) {
      throw new LocalTranscribeError('engine', `the summary failed (${err.message}); run without --summary for the transcript alone, or set NOTESVC_LLM=builtin`)
    }
    throw err
  }
  return { ...doc, summary: { styleId: opts.styleId, title: summary.title, summary: summary.summary, structuredContent: summary.structuredContent } }
}
