/**
 * A live stream made into its note: the kept parts joined into one WAV (the note's recording, where an
 * upload's file goes), then, in one transaction, the upload marked complete with what the stream was
 * charged (nothing more is charged), the note queued for the usual stages and the stream finished.
 * A sandbox stream's note gets the fixed sandbox output at once. Safe to run again after a crash at any
 * point: the WAV is written whole or not at all, the transaction happens once, the parts go last.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../../clock'
import type { Logger } from '../../log'
import type { StyleId } from '../../engines/llm/engine'
import type { MediaStorage } from '../../storage/storage'
import type { NotesService } from '../notes/service'
import type { UploadsService } from '../uploads/service'
import { SANDBOX_SEGMENTS, SANDBOX_TRANSCRIPT, sandboxSummary } from '../processing/sandbox'
import { partKey, wavHeader } from './stream-audio'
import { generationOfPart, type StreamRow, type StreamsRepo } from './streams-repo'

export interface FinishDeps {
  repo: StreamsRepo
  uploads: UploadsService['recordings']
  notes: NotesService
  storage: MediaStorage
  clock: Clock
  log: Logger
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  queueJob: (noteId: string) => Promise<void>
  wakeWorkers: () => void
}

export type FinishOutcome = { noteId: string; status: 'Summarizing' | 'Done' | 'Error' | 'deleted'; audioSeconds: number; creditsCharged: number }

export const audioSecondsOf = (row: Pick<StreamRow, 'kept_bytes' | 'sample_rate'>) => row.kept_bytes / (row.sample_rate * 2)

export function createStreamFinisher(deps: FinishDeps) {
  const { repo, notes, storage, clock } = deps
  const now = () => clock.now().toISOString()

  async function removeParts(row: StreamRow): Promise<void> {
    for (let part = 1; part <= row.parts; part++) await storage.delete(partKey(row.id, generationOfPart(row, part), part))
    await repo.partsRemoved(row.id)
  }

  /** the parts as one WAV file in a temporary folder; the caller removes the folder */
  async function joinParts(row: StreamRow, dir: string): Promise<string> {
    const path = join(dir, 'recording.wav')
    const out = Bun.file(path).writer()
    out.write(wavHeader(row.kept_bytes, row.sample_rate))
    let bytes = 0
    for (let part = 1; part <= row.parts; part++) {
      const body = await storage.read(partKey(row.id, generationOfPart(row, part), part))
      const data = new Uint8Array(await new Response(body).arrayBuffer())
      out.write(data)
      bytes += data.length
    }
    await out.end()
    if (bytes !== row.kept_bytes) throw new Error(`the stored parts hold ${bytes} bytes where ${row.kept_bytes} were recorded as kept`)
    return path
  }

  async function finishRecorded(row: StreamRow, reason: string): Promise<FinishOutcome['status']> {
    const key = (await deps.uploads.key(row.note_id))!
    const dir = await mkdtemp(join(tmpdir(), 'notesvc-live-'))
    try {
      await storage.put(key, { path: await joinParts(row, dir) })
    } catch (err) {
      deps.log.error('a live stream\'s audio could not be made into its recording; its parts are kept', { stream: row.id, note: row.note_id, error: err })
      await deps.transaction(async () => {
        await notes.fail(row.note_id, 'live_audio_unreadable', `The live recording could not be put together from its ${row.parts} stored parts (${(err as Error).message}); the audio is kept on the server under live/${row.id}/. Ask the administrator to recover it; nothing more was charged.`)
        await repo.markFinished(row.id, `${reason}; recording not assembled`, now())
      })
      return 'Error'
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
    const stored = await storage.stat(key)
    await deps.transaction(async () => {
      await deps.uploads.complete(row.note_id, audioSecondsOf(row), row.credits_charged, stored?.size ?? 0)
      await notes.setStage(row.note_id, 'queued')
      await deps.queueJob(row.note_id)
      await repo.markFinished(row.id, reason, now())
    })
    deps.wakeWorkers()
    await removeParts(row)
    return 'Summarizing'
  }

  /** Makes the note of a stream this caller has claimed (state `finishing`). */
  return async function finish(id: string, reason: string): Promise<FinishOutcome> {
    const row = (await repo.byId(id))!
    const outcome = (status: FinishOutcome['status']): FinishOutcome => ({ noteId: row.note_id, status, audioSeconds: audioSecondsOf(row), creditsCharged: row.credits_charged })
    const note = await notes.getById(row.note_id)
    if (!note) {
      await repo.markFinished(id, `${reason}; the note was deleted`, now())
      await removeParts(row)
      return outcome('deleted')
    }
    if (note.processing_stage !== 'recording') {
      // made already by a run that died before marking the stream finished
      await repo.markFinished(id, reason, now())
      await removeParts(row)
      return outcome(note.status as FinishOutcome['status'])
    }
    if (row.sandbox) {
      const fixed = sandboxSummary(note.style_id as StyleId)
      await deps.transaction(async () => {
        await notes.finish(row.note_id, { summary: fixed.summary, transcript: SANDBOX_TRANSCRIPT, structuredContent: fixed.structuredContent, language: 'en', segments: SANDBOX_SEGMENTS })
        await repo.markFinished(id, reason, now())
      })
      await removeParts(row)
      return outcome('Done')
    }
    if (row.kept_bytes === 0) {
      await deps.transaction(async () => {
        await notes.fail(row.note_id, 'live_no_audio', 'The live stream ended before any audio was kept, so there is nothing to transcribe; nothing was charged. Record again.')
        await repo.markFinished(id, reason, now())
      })
      return outcome('Error')
    }
    return outcome(await finishRecorded(row, reason))
  }
}

