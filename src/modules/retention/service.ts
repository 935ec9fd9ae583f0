import type { Clock } from '../../clock'
import type { RetentionConfig } from '../../config'
import { ApiError } from '../../http/errors'
import type { JobRegistry } from '../../jobs/runtime'
import type { Logger } from '../../log'
import type { AuditService } from '../audit/service'
import type { AuditBy } from '../audit/model'
import type { NotesService } from '../notes/service'
import { MAX_RETENTION_DAYS, RETENTION_CHOICES, type RetentionChoice, type RetentionMode, type RetentionPolicy, type SweepSummary, type UpdateRetentionPolicyRequest } from './model'
import type { RetentionRepo } from './repo'
import { sweep, unsweptNotice, type SweepProgress } from './sweep'

export type RetentionService = ReturnType<typeof createRetentionService>

/** The id of the sweep's row in `recurring_jobs`. */
export const RETENTION_SWEEP = 'retention_sweep'

/**
 * Retention (docs/decisions.md "Retention"): the instance's default policy (NOTESVC_RETENTION_MODE,
 * NOTESVC_RETENTION_DAYS), each account's own policy over it, and the sweep that applies them, which
 * it registers as a recurring task (every NOTESVC_RETENTION_SWEEP_MINUTES, run by one process with
 * workers at a time across every node).
 */
export function createRetentionService(deps: {
  repo: RetentionRepo
  clock: Clock
  log: Logger
  config: RetentionConfig
  notes: NotesService
  audit: AuditService
  /** the store's transactions (a read-then-write of the policy with its audit event) */
  transaction: <T>(fn: () => Promise<T>) => Promise<T>
  accountIdsAfter: (after: string, limit: number) => Promise<string[]>
  mediaOf: (noteId: string) => Promise<string[]>
  deleteObject: (key: string) => Promise<boolean>
  /** where the scheduled sweep is registered */
  jobs: Pick<JobRegistry, 'recur'>
}) {
  const { repo, clock, config } = deps
  const instanceDefault = { mode: config.mode, days: config.days }

  async function policy(accountId: string): Promise<RetentionPolicy> {
    const own = await repo.get(accountId)
    return {
      mode: own?.mode ?? 'default',
      days: own?.days ?? null,
      effective: own ? { mode: own.mode, days: own.days } : instanceDefault,
      instanceDefault,
      updatedAt: own?.updated_at ?? null,
    }
  }

  /** One sweep now, across every account (./sweep.ts). */
  function sweepNow(o: { signal?: AbortSignal; onProgress?: SweepProgress } = {}): Promise<SweepSummary> {
    return sweep({
      clock, log: deps.log, notes: deps.notes, audit: deps.audit, accountIdsAfter: deps.accountIdsAfter,
      mediaOf: deps.mediaOf, deleteObject: deps.deleteObject, auditDays: config.auditDays,
      policyOf: async (accountId): Promise<{ mode: RetentionMode; days: number | null }> => {
        const own = await repo.get(accountId)
        return own ? { mode: own.mode, days: own.days } : instanceDefault
      },
    }, o)
  }

  const service = {
    policy,

    /**
     * Changes an account's policy and records `retention.changed` (old and new) in the same
     * transaction. `days` is required with `media` and `notes`, refused with `default` and `forever`.
     */
    async update(accountId: string, body: UpdateRetentionPolicyRequest, who: AuditBy): Promise<RetentionPolicy> {
      if (!(RETENTION_CHOICES as readonly string[]).includes(body.mode)) {
        throw new ApiError('invalid_request', `Give mode as one of ${RETENTION_CHOICES.join(', ')} (not "${body.mode.slice(0, 20)}").`, { details: [{ field: 'mode', issue: `one of ${RETENTION_CHOICES.join(', ')}` }] })
      }
      const mode = body.mode as RetentionChoice
      const days = body.days ?? null
      if (days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)) {
        throw new ApiError('invalid_request', `Give days as a whole number from 1 to ${MAX_RETENTION_DAYS} (not ${days}).`, { details: [{ field: 'days', issue: `a whole number from 1 to ${MAX_RETENTION_DAYS}` }] })
      }
      if ((mode === 'media' || mode === 'notes') && days === null) {
        throw new ApiError('invalid_request', `Give days (a whole number from 1 to ${MAX_RETENTION_DAYS}) with mode ${mode}: the age, counted from a note's creation, after which ${mode === 'media' ? 'its recording is' : 'the note is'} deleted.`, { details: [{ field: 'days', issue: `required with mode ${mode}: a whole number from 1 to ${MAX_RETENTION_DAYS}` }] })
      }
      if ((mode === 'default' || mode === 'forever') && days !== null) {
        throw new ApiError('invalid_request', `Leave days out with mode ${mode}, or choose mode media or notes to delete after ${days} days.`, { details: [{ field: 'days', issue: `not allowed with mode ${mode}` }] })
      }
      await deps.transaction(async () => {
        const old = await repo.get(accountId, true)
        if (mode === 'default') await repo.remove(accountId)
        else await repo.put({ account_id: accountId, mode, days, updated_at: clock.now().toISOString() })
        await deps.audit.record({
          accountId, actor: who.actor, action: 'retention.changed', target: { type: 'account', id: accountId }, origin: who.origin ?? null,
          details: { oldMode: old?.mode ?? 'default', oldDays: old?.days ?? null, newMode: mode, newDays: days },
        })
      })
      return policy(accountId)
    },

    /** One sweep now, across every account (./sweep.ts). */
    sweep: sweepNow,
  }

  deps.jobs.recur({
    id: RETENTION_SWEEP,
    everyMs: config.sweepMinutes * 60_000,
    run: async signal => {
      const done = await sweepNow({ signal })
      deps.log.info('retention sweep done', { ...done })
      // a sweep that left notes it could not delete is a failed run: the row keeps the reason
      const notice = unsweptNotice(done)
      if (notice) throw new Error(notice)
    },
  })
  return service
}
