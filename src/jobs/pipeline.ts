import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine, type TranscriptSegment } from '../engines/asr/engine'
import type { LlmEngine, StyleId } from '../engines/llm/engine'
import { summarizeLong } from '../engines/llm/summarize'
import { decodeMedia } from '../engines/media/decode'
import { MediaToolMissingError, MediaUnreadableError } from '../engines/media/errors'
import type { MediaTools } from '../engines/media/ffmpeg'
import type { MediaStorage } from '../storage/storage'
import type { JobRow } from './repo'
import { PermanentJobError } from './worker'

/** Seconds of audio handed to the engine at once: memory stays at one chunk (5 min ≈ 19 MB). */
export const CHUNK_SECONDS = 300

export interface PipelineDeps {
  storage: MediaStorage
  tools: MediaTools
  asr: () => AsrEngine
  llm: () => Promise<LlmEngine>
  notes: {
    getById(id: string): { id: string; style_id: string; language: string | null } | null
    setStage(id: string, stage: string): void
    finish(id: string, result: { title?: string; summary: string; transcript: string; structuredContent: Record<string, unknown> | null; language: string | null }): void
  }
  uploads: { byNote(noteId: string): { storage_key: string } | null }
  chunkSeconds?: number
}

/** Groups a stream of sample blocks into chunks of exactly `size` samples (the last one shorter). */
export async function* chunked(blocks: AsyncIterable<Float32Array>, size: number): AsyncGenerator<{ samples: Float32Array; offsetSamples: number }> {
  let buffer = new Float32Array(size)
  let filled = 0
  let offset = 0
  for await (const block of blocks) {
    let from = 0
    while (from < block.length) {
      const take = Math.min(size - filled, block.length - from)
      buffer.set(block.subarray(from, from + take), filled)
      filled += take
      from += take
      if (filled === size) {
        yield { samples: buffer, offsetSamples: offset }
        offset += size
        buffer = new Float32Array(size)
        filled = 0
      }
    }
  }
  if (filled > 0) yield { samples: buffer.subarray(0, filled), offsetSamples: offset }
}

export interface Transcription {
  segments: TranscriptSegment[]
  transcript: string
  language: string | null
}

/**
 * Decodes a media file to 16 kHz mono (streamed) and transcribes it chunk by chunk; segment times are
 * offset to the whole recording. Used by the upload pipeline and the synchronous routes alike.
 */
export async function transcribeMedia(
  path: string,
  deps: { asr: AsrEngine; tools: MediaTools; chunkSeconds?: number },
  opts: { language: string | null; signal?: AbortSignal; onFirstChunk?: () => void },
): Promise<Transcription> {
  const chunkSamples = (deps.chunkSeconds ?? CHUNK_SECONDS) * SAMPLE_RATE
  const segments: TranscriptSegment[] = []
  let language = opts.language
  let started = false
  for await (const chunk of chunked(decodeMedia(path, SAMPLE_RATE, deps.tools, opts.signal), chunkSamples)) {
    if (!started) {
      opts.onFirstChunk?.()
      started = true
    }
    opts.signal?.throwIfAborted()
    const offset = chunk.offsetSamples / SAMPLE_RATE
    const r = await deps.asr.transcribeChunk(chunk.samples, { language: opts.language, signal: opts.signal })
    for (const s of r.segments) segments.push({ start: s.start + offset, end: s.end + offset, text: s.text.trim() })
    language ??= r.language
  }
  if (!started) throw new MediaUnreadableError('the file holds no audio')
  return { segments, transcript: segments.map(s => s.text).filter(Boolean).join(' '), language }
}

/** Why a stage failed, as the note's `errorCode`, for failures retrying cannot fix. */
function permanent(err: unknown): never {
  if (err instanceof PermanentJobError) throw err
  if (err instanceof MediaUnreadableError) throw new PermanentJobError('media_unreadable', `The file could not be read as audio or video: ${err.message}`)
  if (err instanceof MediaToolMissingError) throw new PermanentJobError('media_unsupported', err.message)
  if (err instanceof AsrUnavailableError) throw new PermanentJobError('engine_unavailable', err.message)
  throw err
}

/**
 * The processing of one uploaded file: decode to 16 kHz mono (streamed), transcribe chunk by chunk,
 * summarize in the note's style, store. Each stage is reported on the note as it starts.
 */
export function createUploadPipeline(deps: PipelineDeps) {
  return async function processUpload(job: JobRow, signal: AbortSignal): Promise<void> {
    const note = deps.notes.getById(job.note_id)
    const upload = deps.uploads.byNote(job.note_id)
    if (!note || !upload) throw new PermanentJobError('media_missing', 'The note or its upload no longer exists.')

    deps.notes.setStage(note.id, 'converting')
    if (!(await deps.storage.stat(upload.storage_key))) throw new PermanentJobError('media_missing', 'The uploaded file is no longer in storage; upload it again.')
    const asr = deps.asr()
    try {
      await asr.ready()
    } catch (err) {
      permanent(err)
    }

    const copy = await deps.storage.localCopy(upload.storage_key)
    let heard: Transcription
    try {
      heard = await transcribeMedia(copy.path, { asr, tools: deps.tools, chunkSeconds: deps.chunkSeconds }, {
        language: note.language,
        signal,
        onFirstChunk: () => deps.notes.setStage(note.id, 'transcribing'),
      })
    } catch (err) {
      permanent(err)
    } finally {
      await copy.release()
    }
    const { segments, transcript } = heard
    const language = heard.language

    deps.notes.setStage(note.id, 'summarizing')
    const summary = await summarizeLong(await deps.llm(), { text: transcript, styleId: note.style_id as StyleId, segments, language }, signal)
    deps.notes.finish(note.id, { title: summary.title, summary: summary.summary, transcript, structuredContent: summary.structuredContent, language })
  }
}
