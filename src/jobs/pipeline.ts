import { transcribeMedia, type Transcription } from '../engines/asr/chunked'
import { AsrUnavailableError, type AsrEngine } from '../engines/asr/engine'
import type { LlmEngine, StyleId } from '../engines/llm/engine'
import { summarizeLong } from '../engines/llm/summarize'
import { MediaToolMissingError, MediaUnreadableError } from '../engines/media/errors'
import type { MediaTools } from '../engines/media/ffmpeg'
import type { MediaStorage } from '../storage/storage'
import type { JobRow } from './repo'
import { PermanentJobError, type JobRun } from './worker'

export interface PipelineDeps {
  storage: MediaStorage
  tools: MediaTools
  asr: () => AsrEngine
  llm: () => Promise<LlmEngine>
  notes: {
    getById(id: string): Promise<{ id: string; style_id: string; language: string | null } | null>
    setStage(id: string, stage: string): Promise<void>
    finish(id: string, result: { title?: string; summary: string; transcript: string; structuredContent: Record<string, unknown> | null; language: string | null }): Promise<void>
  }
  uploads: { byNote(noteId: string): { storage_key: string } | null }
  chunkSeconds?: number
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
 * summarize in the note's style, store. Each stage is reported on the note as it starts. Every write
 * is made only while the run holds the job's lease: the stages through `run.write`, the result as the
 * write returned to the pool, which makes it with marking the job done.
 */
export function createUploadPipeline(deps: PipelineDeps) {
  return async function processUpload(job: JobRow, run: JobRun): Promise<() => void> {
    const { signal } = run
    const note = await deps.notes.getById(job.note_id)
    const upload = deps.uploads.byNote(job.note_id)
    if (!note || !upload) throw new PermanentJobError('media_missing', 'The note or its upload no longer exists.')

    await run.write(() => deps.notes.setStage(note.id, 'converting'))
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
        onFirstChunk: () => run.write(() => deps.notes.setStage(note.id, 'transcribing')),
      })
    } catch (err) {
      permanent(err)
    } finally {
      await copy.release()
    }
    const { segments, transcript } = heard
    const language = heard.language

    await run.write(() => deps.notes.setStage(note.id, 'summarizing'))
    const summary = await summarizeLong(await deps.llm(), { text: transcript, styleId: note.style_id as StyleId, segments, language }, signal)
    return () => deps.notes.finish(note.id, { title: summary.title, summary: summary.summary, transcript, structuredContent: summary.structuredContent, language })
  }
}
