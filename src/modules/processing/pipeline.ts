import type { StyleId } from '../../engines/llm/engine'
import { ApiError } from '../../http/errors'
import { actorOf, type CredentialSource, type Principal } from '../../http/principal'
import { WorkerDiedError } from '../../jobs/kinds'
import type { JobRow } from '../../jobs/repo'
import type { JobRegistry } from '../../jobs/runtime'
import type { CreditsService } from '../credits/service'
import type { Library } from '../library'
import type { NotesService } from '../notes/service'
import type { Note } from '../notes/model'
import { SANDBOX_NOTICE, sandboxSummary } from './sandbox'
import { registerSandboxSlow } from './sandbox-slow'
import type { NoteFailure, ProcessedNote, ProcessingStage } from './stages'
import { summaryAgainCharge, summaryAgainPayload, summaryStage, type SummaryStageDeps } from './summary-stage'
import { transcribeStage, type TranscribeStageDeps } from './transcribe-stage'

/** An upload's processing: its transcription, then its summary (the kind's name is the one rows queued before the stages kept). */
const PROCESS_UPLOAD = 'process_upload'
/** A note's summary made again, in the style the job names: the summary stage alone. */
const SUMMARIZE_NOTE = 'summarize_note'
/** The operation a summary made again is charged as (its declared price) and recorded under in usage. */
const SUMMARIZE_AGAIN_OPERATION = 'createNoteSummary'

export type ProcessingJobs = ReturnType<typeof createProcessingJobs>

/**
 * The processing of notes as jobs, registered with the job runtime: an upload's processing
 * (`process_upload`: the transcription stage, then the summary stage) and a summary made again for an
 * existing note (`summarize_note`: the summary stage alone). Each stage has its own failure rule (what
 * the note says); each kind says what is given back when it fails for good: an upload refunds the
 * credits its completion charged, a summary made again the charge its payload names (none when it was
 * queued without one).
 */
export function createProcessingJobs(deps: Omit<TranscribeStageDeps & SummaryStageDeps, 'notes' | 'recordingOf'> & {
  jobs: JobRegistry
  notes: NotesService
  credits: Pick<CreditsService, 'refund' | 'charge' | 'quote' | 'balance'>
  /** runs `fn` in one database transaction, which the repositories it calls join */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
}) {
  const { jobs, notes } = deps
  const transcribe = transcribeStage(deps)
  const summarize = summaryStage({ ...deps, recordingOf: deps.recording })

  /** The job failed for good: the note says why, and `refund` (a charge) comes back, in the transaction that ends the job. */
  async function failNote(job: JobRow, failure: (note: ProcessedNote) => NoteFailure, refund: string | null): Promise<void> {
    const note = await notes.getById(job.note_id)
    if (!note) return
    const { code, message } = failure(note)
    await deps.transaction(async () => {
      await notes.fail(job.note_id, code, message)
      if (refund) await deps.credits.refund(refund)
    })
  }

  jobs.register<ProcessingStage>({
    kind: PROCESS_UPLOAD,
    stages: [transcribe, summarize],
    onFailure: async (job, err, stage) => failNote(job, note => (err instanceof WorkerDiedError ? {
      code: err.code,
      message: `Processing stopped ${err.takeovers} times because the worker running it died (crashed or was killed) before it finished, so it was not started again; the credits were refunded. The server's log names the job (${err.jobId}); upload the recording again once the cause is fixed.`,
    } : stage.failure(err, note)), (await deps.recording(job.note_id))?.usageId ?? null),
  })

  jobs.register<ProcessingStage>({
    kind: SUMMARIZE_NOTE,
    stages: [summarize],
    onFailure: (job, err, stage) => failNote(job, note => (err instanceof WorkerDiedError ? {
      code: err.code,
      message: `Summarizing again stopped ${err.takeovers} times because the worker running it died (crashed or was killed) before it finished, so it was not started again; the note keeps its transcript and its earlier summary. The server's log names the job (${err.jobId}).`,
    } : stage.failure(err, note)), summaryAgainCharge(job)),
  })

  /**
   * The note's summary made again in `styleId`, in one transaction: 404 for a note not of the library,
   * 409 while it is processing (or when it failed before it had a transcript); then, with `payer`, the
   * charge (402 changes nothing); then the note back to `Summarizing` at `summarizing` (progress 1)
   * and the job queued with the charge it refunds if it fails for good. A sandbox note gets the style's
   * fixed summary at once, nothing charged. Returns the note as it stands at the end of the transaction
   * and what was charged.
   */
  async function queueSummary(lib: Library, noteId: string, styleId: StyleId, payer: { source: CredentialSource; actorId: string } | null): Promise<{ note: Note; creditsCharged: number; creditsRemaining: number | null }> {
    const out = await deps.transaction(async () => {
      const note = await notes.readableTranscript(lib, noteId)
      if (lib.sandbox) {
        const fixed = sandboxSummary(styleId)
        await notes.finish(noteId, { summary: fixed.summary, structuredContent: fixed.structuredContent, language: note.language, styleId })
        return { queued: false, note: await notes.get(lib, noteId), creditsCharged: 0, creditsRemaining: null }
      }
      const cost = payer ? deps.credits.quote(lib, SUMMARIZE_AGAIN_OPERATION) : 0
      const charge = payer ? await deps.credits.charge({ accountId: lib.accountId, operation: SUMMARIZE_AGAIN_OPERATION, credits: cost, source: payer.source, actorId: payer.actorId, noteId }) : null
      if (!(await notes.reopen(lib, noteId, 'summarizing'))) {
        throw new ApiError('conflict', `Note ${noteId} is already processing; poll GET /v1/notes/${noteId}/status until isComplete is true, then ask again.`)
      }
      await jobs.enqueue(SUMMARIZE_NOTE, noteId, summaryAgainPayload(styleId, charge?.usageId))
      // read here, not after the commit, when a worker may already have finished it
      return { queued: true, note: await notes.get(lib, noteId), creditsCharged: cost, creditsRemaining: charge?.balance.totalRemaining ?? null }
    })
    const { queued, ...result } = out
    if (queued) jobs.wake()
    return result
  }

  const sandboxSlow = registerSandboxSlow({ jobs, notes })

  return {
    /** Queues a completed upload's processing, in the caller's transaction (`jobs.wake` after it commits). */
    queueUpload: (noteId: string): Promise<void> => jobs.enqueue(PROCESS_UPLOAD, noteId),

    /** Queues the sandbox scenario `slow`'s steps for a completed sandbox upload (sandbox-slow.ts), in the caller's transaction. */
    queueSandboxSlow: sandboxSlow.queue,

    /**
     * The note's summary made again in `styleId` by the summary stage alone, its transcript untouched
     * and its speech engine not called, charging nothing (`queueSummary`). Returns the note's status.
     */
    async summarizeAgain(lib: Library, noteId: string, styleId: StyleId) {
      await queueSummary(lib, noteId, styleId, null)
      return notes.status(lib, noteId)
    },

    /**
     * `createNoteSummary`: the summary made again for `p`, charged as a summary (its declared 2
     * credits; 0 with metering off, nothing for a sandbox key) and refunded if it fails for good. The
     * note as it stands (`Summarizing`; a sandbox note `Done` with the fixed summary), what was
     * charged, and the balance left.
     */
    async createNoteSummary(p: Principal, noteId: string, styleId: StyleId): Promise<{ body: Note & { creditsCharged: number; notice?: string }; creditsRemaining: number }> {
      const r = await queueSummary(p, noteId, styleId, { source: p.source, actorId: actorOf(p) })
      const creditsRemaining = r.creditsRemaining ?? (await deps.credits.balance(p.accountId)).totalRemaining
      return { creditsRemaining, body: { ...r.note, creditsCharged: r.creditsCharged, ...(p.sandbox ? { notice: SANDBOX_NOTICE } : {}) } }
    },
  }
}
