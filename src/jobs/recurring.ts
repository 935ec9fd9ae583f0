import type { Logger } from '../log'
import type { Store } from '../db/store'
import { createLeasedQueue, leaseOf, type Lease, type QueueRow } from './queue'

/**
 * Work that recurs on a schedule (the retention sweep), run one at a time across every process and
 * node on the database: each task is one row of `recurring_jobs`, a row of the one leased queue
 * (`queue.ts`). A process claims it when it is due, holds it under a lease its heartbeat extends while
 * the run lasts, and puts it back in the queue due at its next run when the run ends. A process that
 * dies mid-run leaves the row running on a lease that runs out; another process then claims it, as a
 * job of a dead worker. No second locking scheme: the claim is the queue's.
 */
export interface RecurringTask {
  /** the row's id (`retention_sweep`) */
  id: string
  /** how long after a run ends the next is due */
  everyMs: number
  /** one run; stops early when `signal` is aborted (the process stops, or the lease was lost) */
  run(signal: AbortSignal): Promise<unknown>
}

/** A clock in the database's time (jobs/database-clock.ts), so every node agrees when a row is due. */
export interface QueueClock {
  now(): Date
  fresh(): Promise<void>
}

export type RecurringJobs = ReturnType<typeof createRecurringJobs>

/** The `recurring_jobs` rows: the leased queue's claim, lease and requeue, and making a row due now. */
export function createRecurringJobs(store: Store) {
  const queue = createLeasedQueue<QueueRow>(store, 'recurring_jobs')
  return {
    /** Adds the row, due at `runAfter`, unless it exists. */
    ensure: async (id: string, at: string, runAfter: string): Promise<void> => {
      await store.run(`INSERT INTO recurring_jobs (id, status, attempts, takeovers, run_after, created_at, updated_at) VALUES (?, 'queued', 0, 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, [id, runAfter, at, at])
    },
    /** Makes a queued row due at `at` (a run asked for now); a running row is left alone. */
    dueNow: async (id: string, at: string): Promise<void> => {
      await store.run(`UPDATE recurring_jobs SET run_after = ? WHERE id = ? AND status = 'queued' AND run_after > ?`, [at, id, at])
    },
    anyDue: queue.anyDue,
    claim: queue.claim,
    extend: queue.extend,
    requeue: queue.requeue,
    get: queue.get,
  }
}

/**
 * Runs `task` under the row's lease: claims it if it is due at `clock.now()` (else returns null),
 * renews the lease every third of `leaseMs` while it runs, and requeues it due `task.everyMs` after
 * the end (a failed run too: the error is kept in `last_error`, and the next run starts over).
 */
export async function runIfDue(deps: { rows: RecurringJobs; clock: QueueClock; owner: string; leaseMs: number; log: Logger; stopping?: AbortSignal }, task: RecurringTask): Promise<{ ran: boolean; result?: unknown }> {
  const { rows, clock, leaseMs, log } = deps
  await clock.fresh()
  const at = clock.now()
  const [row] = await rows.claim(deps.owner, at.toISOString(), new Date(at.getTime() + leaseMs).toISOString(), 1)
  if (!row) return { ran: false }
  if (row.id !== task.id) {
    // another task's row (a later version's): back to the queue at once, untouched
    await rows.requeue(leaseOf(row), row.run_after, row.last_error, clock.now().toISOString())
    return { ran: false }
  }
  const lease: Lease = leaseOf(row)
  const lost = new AbortController()
  const beat = setInterval(() => {
    rows.extend([lease], new Date(clock.now().getTime() + leaseMs).toISOString())
      .then(gone => { if (gone.length) lost.abort(new Error(`${task.id}: the lease was lost`)) })
      .catch(err => log.warn('could not renew the lease of a recurring task', { task: task.id, error: err }))
  }, Math.max(100, Math.floor(leaseMs / 3)))
  let error: string | null = null
  let result: unknown
  try {
    result = await task.run(deps.stopping ? AbortSignal.any([deps.stopping, lost.signal]) : lost.signal)
  } catch (err) {
    error = err instanceof Error ? err.message : String(err)
    log.error('recurring task failed; it runs again at its next time', { task: task.id, error })
  } finally {
    clearInterval(beat)
  }
  const end = clock.now()
  if (!(await rows.requeue(lease, new Date(end.getTime() + task.everyMs).toISOString(), error, end.toISOString()))) {
    log.warn('a recurring task ended after its lease was taken by another process', { task: task.id })
  }
  if (error !== null) throw new Error(error)
  return { ran: true, result }
}

/**
 * Every process with workers: looks every `pollMs` for a due row of `task` (made on first start, due
 * `firstAfterMs` later) and runs it. Returns the function that stops it (waiting for a run under way).
 */
export function scheduleRecurring(deps: { rows: RecurringJobs; clock: QueueClock; owner: string; leaseMs: number; log: Logger; pollMs: number; firstAfterMs: number }, task: RecurringTask): () => Promise<void> {
  const stopping = new AbortController()
  let current: Promise<unknown> | null = null
  const tick = () => {
    if (current || stopping.signal.aborted) return
    current = (async () => {
      await deps.clock.fresh()
      const now = deps.clock.now()
      await deps.rows.ensure(task.id, now.toISOString(), new Date(now.getTime() + deps.firstAfterMs).toISOString())
      if (!(await deps.rows.anyDue(deps.clock.now().toISOString()))) return
      await runIfDue({ ...deps, stopping: stopping.signal }, task)
    })().catch(err => deps.log.warn('could not run a recurring task; trying again later', { task: task.id, error: err }))
      .finally(() => { current = null })
  }
  const timer = setInterval(tick, deps.pollMs)
  timer.unref?.()
  tick()
  return async () => {
    stopping.abort()
    clearInterval(timer)
    await current
  }
}
