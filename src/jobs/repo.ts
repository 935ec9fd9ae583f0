import type { Store } from '../db/store'
import { createLeasedQueue, leaseOf, LeaseLostError, type Lease, type QueueRow } from './queue'

/** A job of the durable queue: a row of the leased queue (`queue.ts`) that names its note and kind. */
export interface JobRow extends QueueRow {
  note_id: string
  kind: string
  /** the stage of its kind the job has reached (a run starts there); null: the first (migration 20) */
  stage: string | null
  /** what the kind's stages need beyond the note, as JSON written by the module that queued it; null: nothing */
  payload: string | null
}

export { leaseOf, LeaseLostError, type Lease }

export interface WorkerRow {
  id: string
  host: string
  pid: number
  pid_namespace: string | null
  slots: number
  started_at: string
  heartbeat_at: string
}

/** The channel on which PostgreSQL announces queued jobs (NOTIFY, delivered when the enqueue commits). */
const JOBS_CHANNEL = 'notesvc_jobs'

export type JobsRepo = ReturnType<typeof createJobsRepo>

/** PostgreSQL returns BIGINT and counts as strings; the row as the rest of the code reads it. */
const workerRow = (r: WorkerRow): WorkerRow => ({ ...r, pid: Number(r.pid), slots: Number(r.slots) })

/**
 * The durable job queue (the leased queue of `queue.ts` over the `jobs` table) and the `workers`
 * table, on either back end. Every fenced write is an UPDATE whose WHERE names the run (owner and
 * attempt), so it locks the row it checks, in the transaction that makes the run's other writes (which
 * join it: ambient transactions).
 */
export function createJobsRepo(store: Store) {
  const queue = createLeasedQueue<JobRow>(store, 'jobs')
  return {
    /** what the store can do (notifications, a clock of its own), never which back end it is */
    sql: store.sql,
    claimSql: queue.claimSql,
    anyDue: queue.anyDue,
    fenced: queue.fenced,
    end: queue.end,
    retry: queue.retry,
    releaseOwner: queue.releaseOwner,
    get: queue.get,
    depth: queue.depth,

    /**
     * Queues a job (due at `runAfter`, by default at once), in the caller's transaction if there is
     * one. The same transaction announces it on JOBS_CHANNEL where the store notifies (delivered to
     * every listening process when it commits, and never if it rolls back), so idle workers on every
     * node look at once.
     */
    enqueue: (id: string, noteId: string, kind: string, at: string, runAfter: string = at, payload: string | null = null): Promise<void> => store.transaction(async () => {
      await store.run(`INSERT INTO jobs (id, note_id, kind, status, attempts, run_after, created_at, updated_at, payload) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?)`, [id, noteId, kind, runAfter, at, at, payload])
      await store.notify(JOBS_CHANNEL, id)
    }),

    /**
     * The run moved past a stage: the row remembers `stage` as the one to start at, and `write` (the
     * stage's result) is made in the same transaction, only while the run holds its lease (else
     * LeaseLostError, nothing written).
     */
    advance: (lease: Lease, at: string, stage: string, write: () => unknown = () => {}): Promise<unknown> => queue.fenced(lease, at, async () => {
      await store.run('UPDATE jobs SET stage = ? WHERE id = ?', [stage, lease.id])
      return write()
    }),

    /** Takes the oldest claimable job for `owner` until `until`, or null (queue.ts: a job whose worker died is taken like a queued one). */
    claim: async (owner: string, at: string, until: string): Promise<JobRow | null> => (await queue.claim(owner, at, until, 1))[0] ?? null,

    /**
     * A worker process's heartbeat, one transaction: its row in `workers` (written on the first beat)
     * and the leases of the runs it holds, extended to `until`. Returns the leases it no longer holds
     * (another worker took the job after the lease ran out): their work should stop.
     */
    heartbeat: (worker: WorkerRow, leases: Lease[], until: string): Promise<Lease[]> => store.transaction(async () => {
      await store.run(`INSERT INTO workers (id, host, pid, pid_namespace, slots, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
      [worker.id, worker.host, worker.pid, worker.pid_namespace, worker.slots, worker.started_at, worker.heartbeat_at])
      return queue.extend(leases, until)
    }, 'write'),

    latestForNote: async (noteId: string): Promise<JobRow | null> => {
      const r = await store.get<JobRow>('SELECT * FROM jobs WHERE note_id = ? ORDER BY created_at DESC LIMIT 1', [noteId])
      return r ? { ...r, attempts: Number(r.attempts), takeovers: Number(r.takeovers) } : null
    },
    /** How far the database's clock is ahead of `localMs` (Store.clockOffset). */
    clockOffset: (localMs: () => number) => store.clockOffset(localMs),
    /** A number that moves when another connection commits (Store.changeCounter). */
    changeCounter: () => store.changeCounter(),
    /**
     * Calls `onQueued` for every job queued on any node (after its commit), and `onListen` once
     * listening; null where the store does not notify (watch `changeCounter`). Resolves to the
     * function that stops listening.
     */
    listen: (onQueued: () => void, onListen: () => void) => store.listen(JOBS_CHANNEL, onQueued, onListen),

    workers: {
      remove: async (id: string): Promise<void> => { await store.run('DELETE FROM workers WHERE id = ?', [id]) },
      list: async (): Promise<WorkerRow[]> => (await store.all<WorkerRow>('SELECT * FROM workers ORDER BY started_at, id')).map(workerRow),
      /** Worker processes whose last heartbeat is at or after `since`. */
      heartbeatSince: async (since: string): Promise<WorkerRow[]> =>
        (await store.all<WorkerRow>('SELECT * FROM workers WHERE heartbeat_at >= ? ORDER BY started_at, id', [since])).map(workerRow),
    },
  }
}
