import type { Clock } from '../../clock'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/admission'
import { actorOf } from '../../http/principal'
import type { NotesService } from '../notes/service'
import type { CreditsService } from '../credits/service'
import type { MediaStorage } from '../../storage/storage'
import { measuredDuration } from '../../engines/media/decode'
import { MediaUnreadableError } from '../../engines/media/errors'
import type { AsrEngine } from '../../engines/asr/engine'
import { missingSpeechEngine } from '../../engines/asr'
import type { MediaTools } from '../../engines/media/ffmpeg'
import type { StyleId } from '../../engines/llm/engine'
import { SANDBOX_DURATION_SECONDS, SANDBOX_SEGMENTS, SANDBOX_TRANSCRIPT, sandboxSummary } from '../processing/sandbox'
import { SANDBOX_SLOW_FIRST_PROGRESS } from '../processing/sandbox-slow'
import { failedAfterRetries } from '../processing/stages'
import { scenarioError, scenarioOfFileName, type SandboxScenario } from '../../http/sandbox-scenarios'
import type { Charged } from '../processing/service'
import { uploadLimitOf } from './file-arrival'
import type { UploadAccepted } from './model'
import type { UploadRow, UploadsRepo } from './repo'

type Completed = Charged<UploadAccepted> & { accepted: boolean }

/** The sandbox scenario `rate_limited` refuses an upload's completion until this long after the upload was created. */
const RATE_LIMITED_FOR_MS = 1000

/** The note of the sandbox scenario `note_error`, as a transcription that failed for good says it. */
const NOTE_ERROR = failedAfterRetries(new Error('the speech engine failed on this recording; this is the sandbox scenario note_error, and a file named otherwise gets the sample note'), 'transcription_failed')

/**
 * `completeUpload`: the stored file measured (never its header's claim), then charged, marked complete
 * and its processing job queued in one transaction, so of concurrent calls exactly one charges. A
 * sandbox upload is finished at once with the fixed note.
 */
export function createUploadCompletion(deps: {
  repo: UploadsRepo
  notes: NotesService
  credits: CreditsService
  storage: MediaStorage
  tools: MediaTools
  asr: () => AsrEngine
  clock: Clock
  publicUrl: string
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  queueJob: (noteId: string) => Promise<void>
  /** queues the sandbox scenario `slow`'s steps (processing/sandbox-slow.ts), in the caller's transaction */
  queueSandboxSlow: (noteId: string) => Promise<void>
  wakeWorkers: () => void
}) {
  const { repo, notes, credits, storage, clock } = deps

  async function requireUpload(p: Principal, id: string): Promise<UploadRow> {
    const row = await repo.get(p, id)
    if (!row) throw new ApiError('not_found', `No upload with id ${id} exists in this library; start one with POST /v1/uploads.`)
    return row
  }

  /**
   * The stored file's duration, measured from its audio (never its header's claim), before anything is
   * charged; a file whose header cannot be true, or that holds no audio, is refused here with nothing
   * charged and the upload left open for another PUT.
   */
  async function durationOf(row: UploadRow): Promise<number | null> {
    const copy = await storage.localCopy(row.storage_key)
    try {
      return await measuredDuration(copy.path, deps.tools)
    } catch (err) {
      if (!(err instanceof MediaUnreadableError)) throw err
      throw new ApiError('invalid_request', `The file uploaded for ${row.note_id} cannot be transcribed: ${err.message}. Nothing was charged; PUT a playable recording to the uploadUrl again and complete the upload, or start a new one with POST /v1/uploads.`, {
        details: [{ field: 'file', issue: err.message }],
      })
    } finally {
      await copy.release()
    }
  }

  const pollUrl = (id: string) => `${deps.publicUrl}/v1/notes/${id}/status`
  const remaining = async (p: Principal) => (await credits.balance(p.accountId)).totalRemaining
  /** The answer to completing an upload already completed: 200, nothing charged. */
  const already = async (p: Principal, r: UploadRow): Promise<Completed> => ({
    accepted: false,
    creditsRemaining: await remaining(p),
    body: { noteId: r.note_id, status: (await notes.requireNote(p, r.note_id)).status, creditsCharged: 0, durationSeconds: r.duration_seconds, poll: pollUrl(r.note_id), alreadyCompleted: true },
  })

  /**
   * A sandbox upload, finished at once with the fixed note, or as the scenario named by the request's
   * header or the file's name says (http/sandbox-scenarios.ts): refused (402, 429 within 1 s of the
   * upload's creation, 502) with nothing changed, the note failed (`note_error`), or processed by the
   * slow job (`slow`). Nothing is charged.
   */
  async function completeSandbox(p: Principal, row: UploadRow, named: SandboxScenario | null): Promise<Completed> {
    const id = row.note_id
    const scenario = named ?? scenarioOfFileName(row.file_name)
    if (scenario === 'insufficient_credits' || scenario === 'upstream_failure') throw scenarioError(scenario)
    if (scenario === 'rate_limited' && clock.now().getTime() < Date.parse(row.created_at) + RATE_LIMITED_FOR_MS) throw scenarioError(scenario)
    const sandboxCost = credits.quote(p, 'completeUpload', SANDBOX_DURATION_SECONDS)
    const won = await deps.transaction(async () => {
      if (!(await repo.markCompleted({ note_id: id, completed_at: clock.now().toISOString(), duration_seconds: SANDBOX_DURATION_SECONDS, credits_charged: sandboxCost, usage_id: null }))) return false
      if (scenario === 'note_error') {
        await notes.setStage(id, 'transcribing')
        await notes.fail(id, NOTE_ERROR.code, NOTE_ERROR.message)
      } else if (scenario === 'slow') {
        await notes.setStage(id, 'transcribing', SANDBOX_SLOW_FIRST_PROGRESS)
        await deps.queueSandboxSlow(id)
      } else {
        const fixed = sandboxSummary((await notes.requireNote(p, id)).style_id as StyleId)
        await notes.finish(id, { summary: fixed.summary, transcript: SANDBOX_TRANSCRIPT, structuredContent: fixed.structuredContent, language: 'en', segments: SANDBOX_SEGMENTS })
      }
      return true
    })
    if (!won) return already(p, (await repo.byNote(id))!)
    if (scenario === 'slow') deps.wakeWorkers()
    const status = scenario === 'note_error' ? 'Error' : scenario === 'slow' ? 'Summarizing' : 'Done'
    return { accepted: true, creditsRemaining: await remaining(p), body: { noteId: id, status, creditsCharged: sandboxCost, durationSeconds: SANDBOX_DURATION_SECONDS, poll: pollUrl(id), alreadyCompleted: false } }
  }

  /** `scenario`: the sandbox scenario the request's header names (ignored for a live key). */
  return async function completeUpload(p: Principal, id: string, scenario: SandboxScenario | null = null): Promise<Completed> {
    const row = await requireUpload(p, id)
    const poll = pollUrl(id)
    if (row.completed_at) return already(p, row)
    if (p.sandbox) return completeSandbox(p, row, scenario)

    const noEngine = missingSpeechEngine(deps.asr())
    if (noEngine) throw new ApiError('upstream_failure', `${noEngine} Nothing was charged; the upload is kept, so complete it again once an engine is installed.`)
    const stored = await storage.stat(row.storage_key)
    const removedAt = stored ? null : (await notes.requireNote(p, id)).media_removed_at
    if (removedAt) {
      throw new ApiError('conflict', `Upload ${id} was never completed, and the retention policy removed it on ${removedAt.slice(0, 10)}; start a new upload with POST /v1/uploads.`)
    }
    if (!stored) throw new ApiError('conflict', `The file for upload ${id} has not arrived yet; PUT it to the uploadUrl, then complete the upload.`)
    if (stored.size > uploadLimitOf(row)) {
      await storage.delete(row.storage_key)
      throw new ApiError('conflict', `The stored file (${stored.size} bytes) is larger than the ${uploadLimitOf(row)} bytes allowed for this upload, so it was removed; upload it again.`)
    }
    const duration = await durationOf(row)
    const cost = credits.quote(p, 'completeUpload', duration)

    // Charging, marking complete, the note's stage and queueing are one transaction, on the upload's
    // row locked first: of concurrent calls (on any node) exactly one charges; the rest find it
    // completed and charge nothing.
    const outcome = await deps.transaction(async () => {
      const current = (await repo.byNote(id, { lock: true }))!
      if (current.completed_at) return null
      const charge = await credits.charge({ accountId: p.accountId, operation: 'completeUpload', credits: cost, source: p.source, noteId: id, actorId: actorOf(p) })
      await repo.markCompleted({ note_id: id, completed_at: clock.now().toISOString(), duration_seconds: duration, credits_charged: cost, usage_id: charge.usageId })
      await notes.setStage(id, 'queued')
      await deps.queueJob(id)
      return charge.balance.totalRemaining
    })
    if (outcome === null) return already(p, (await repo.byNote(id))!)
    deps.wakeWorkers()
    return { accepted: true, creditsRemaining: outcome, body: { noteId: id, status: 'Summarizing', creditsCharged: cost, durationSeconds: duration, poll, alreadyCompleted: false } }
  }
}
