import type { Clock } from '../../clock'
import type { Logger } from '../../log'
import type { Library } from '../library'
import type { NotesService } from '../notes/service'
import type { AuditService } from '../audit/service'
import { UPLOAD_TTL_MS } from '../uploads/model'
import type { RetentionMode, SweepSummary } from './model'

/** Notes read per page of one library; each note is then handled in short transactions of its own. */
const SWEEP_PAGE = 200
/** Accounts read per page. */
const ACCOUNT_PAGE = 500

export interface SweepDeps {
  clock: Clock
  log: Logger
  notes: NotesService
  audit: AuditService
  /** every account's id, a page at a time */
  accountIdsAfter: (after: string, limit: number) => Promise<string[]>
  /** the account's effective policy */
  policyOf: (accountId: string) => Promise<{ mode: RetentionMode; days: number | null }>
  /** the storage keys of a note's recording */
  mediaOf: (noteId: string) => Promise<string[]>
  /** deletes a stored object; true when there was one, false when it was already gone; any other failure throws */
  deleteObject: (key: string) => Promise<boolean>
  /** NOTESVC_AUDIT_RETENTION_DAYS, null: keep forever */
  auditDays: number | null
}

/** What the sweep reports as it goes (the CLI prints it on stderr). */
export type SweepProgress = (p: SweepSummary & { accountsSwept: number }) => void

/**
 * One sweep: for every account whose policy is not `forever`, both of its libraries, oldest notes
 * first, those created more than `days` ago (counted from the note's `dateCreated`). Finished and
 * failed notes are swept, and so are uploads that never got their file or completion (`awaiting_upload`,
 * older than the upload URL's lifetime too); notes still processing (a job queued or running) are
 * counted and left. For each note, in this order:
 *   1. its stored recording is deleted (an object already gone is fine);
 *   2. in one short transaction, its row is deleted (`notes`) or marked `media_removed_at` (`media`),
 *      with the audit event.
 * A sweep killed between 1 and 2 leaves a note whose object is gone but whose row still qualifies; the
 * next sweep picks it up again and finishes it. Nothing is held across notes, and pages are read by
 * key, so a sweep of 100,000 notes holds the write lock only for one note's statements at a time.
 * A note whose stored object cannot be deleted (any storage error but "already gone") is left whole,
 * counted in `failed` and logged with its id and the storage's error, and the sweep goes on.
 * Then the audit log's own events older than NOTESVC_AUDIT_RETENTION_DAYS are pruned.
 */
export async function sweep(deps: SweepDeps, o: { signal?: AbortSignal; onProgress?: SweepProgress } = {}): Promise<SweepSummary> {
  const totals: SweepSummary = { notesDeleted: 0, recordingsRemoved: 0, skippedProcessing: 0, failed: 0, auditEventsPruned: 0 }
  let accountsSwept = 0
  const report = () => o.onProgress?.({ ...totals, accountsSwept })
  const stop = () => { if (o.signal?.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : new Error('the sweep was stopped') }
  let after = ''
  for (;;) {
    const ids = await deps.accountIdsAfter(after, ACCOUNT_PAGE)
    if (ids.length === 0) break
    after = ids[ids.length - 1]!
    for (const accountId of ids) {
      stop()
      const policy = await deps.policyOf(accountId)
      if (policy.mode === 'forever' || policy.days === null) continue
      for (const sandbox of [false, true]) await sweepLibrary(deps, { accountId, sandbox }, policy.mode, policy.days, totals, stop, report)
      accountsSwept++
    }
  }
  if (deps.auditDays !== null) totals.auditEventsPruned = await deps.audit.prune(deps.auditDays)
  report()
  return totals
}

async function sweepLibrary(deps: SweepDeps, lib: Library, mode: 'media' | 'notes', days: number, totals: SweepSummary, stop: () => void, report: () => void) {
  const now = deps.clock.now().getTime()
  const cutoff = new Date(now - days * 86_400_000).toISOString()
  // An upload still awaiting its file or its completion (abandoned, or completion refused, e.g. 402)
  // has no job and never will: once older than the cutoff and than its upload URL's lifetime (no PUT
  // can start any more), it is settled like a failed note.
  const abandonedBefore = new Date(Math.min(Date.parse(cutoff), now - UPLOAD_TTL_MS)).toISOString()
  const actor = { type: 'policy' as const, id: 'retention' }
  let after: { dateCreated: string; id: string } | null = null
  for (;;) {
    stop()
    const page = await deps.notes.agedPage(lib, cutoff, after, SWEEP_PAGE, mode === 'media')
    if (page.length === 0) return
    const last = page[page.length - 1]!
    after = { dateCreated: last.date_created, id: last.id }
    for (const note of page) {
      const abandoned = note.status === 'Summarizing' && note.processing_stage === 'awaiting_upload' && note.date_created < abandonedBefore
      if (note.status === 'Summarizing' && !abandoned) {
        totals.skippedProcessing++
        continue
      }
      stop()
      const keys = await deps.mediaOf(note.id)
      let removed = 0
      try {
        for (const key of keys) if (await deps.deleteObject(key)) removed++
      } catch (err) {
        // One object the storage will not delete stops neither the sweep nor the accounts after it:
        // the note is left as it is (its row still qualifies, so the next sweep tries again), counted
        // and logged; the run then ends as failed (unsweptNotice).
        totals.failed++
        deps.log.error('retention sweep: could not delete the recording of a note from storage; the note is left for the next sweep', {
          noteId: note.id, accountId: lib.accountId, error: err instanceof Error ? err.message : String(err),
        })
        continue
      }
      // the files are gone whatever the row's transaction finds next, so they are counted now
      totals.recordingsRemoved += removed
      const at = deps.clock.now().toISOString()
      const record = (action: 'note.deleted' | 'note.media_deleted') => () =>
        deps.audit.record({ accountId: lib.accountId, actor, action, target: { type: 'note', id: note.id }, details: { mode, days, sandbox: lib.sandbox, ...(abandoned ? { abandonedUpload: true } : {}) } })
      if (mode === 'notes') {
        if (await deps.notes.deleteSettled(lib, note.id, abandonedBefore, record('note.deleted'))) totals.notesDeleted++
      } else await deps.notes.markMediaRemoved(lib, note.id, at, abandonedBefore, record('note.media_deleted'))
    }
    report()
  }
}

/**
 * What to tell the operator when a sweep left notes it could not sweep (`failed` > 0), or null. The
 * CLI prints it and exits 1; the workers' scheduled run ends as failed with it (`recurring_jobs`).
 */
export function unsweptNotice(s: SweepSummary): string | null {
  if (s.failed === 0) return null
  return `${s.failed} ${s.failed === 1 ? 'note was' : 'notes were'} not swept: the storage refused to delete ${s.failed === 1 ? 'its recording' : 'their recordings'} (the log's "retention sweep: could not delete" lines name each note and the storage's error). Fix the storage (permissions, credentials, the bucket's policy), then run \`notesvc retention sweep\` again or wait for the next scheduled sweep: ${s.failed === 1 ? 'it is' : 'they are'} swept then.`
}
