import { PostgresStore, type Store } from '../db/store'

export interface JobRow {
  id: string
  note_id: string
  kind: string
  status: 'queued' | 'running' | 'done' | 'failed'
  /** how many times the job was claimed; with the owner it names one run (the fencing token) */
  attempts: number
  run_after: string
  last_error: string | null
  /** the worker process (`workers.id`) that claimed it last */
  lease_owner: string | null
  /** while running: when the lease runs out unless a heartbeat extends it */
  lease_expires_at: string | null
  created_at: string
  updated_at: string
}

/** One run of a job: who claimed it and which claim it was. Writes of the run are fenced by both. */
export interface Lease {
  jobId: string
  owner: string
  attempt: number
}

export const leaseOf = (job: JobRow): Lease => ({ jobId: job.id, owner: job.lease_owner!, attempt: job.attempts })

/** A write of a run whose lease another worker has taken since (or that ended): nothing was written. */
export class LeaseLostError extends Error {
  constructor(lease: Lease) {
    super(`job ${lease.jobId}: attempt ${lease.attempt} of worker ${lease.owner} no longer holds the lease`)
  }
}

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
export const JOBS_CHANNEL = 'notesvc_jobs'

/** Jobs that may be claimed at `?` (given twice): queued and due, or running on a lease that ran out. */
const CLAIMABLE = `(status = 'queued' AND run_after <= ?) OR (status = 'running' AND lease_expires_at <= ?)`

/**
 * The claim: a run whose lease ran out first (few rows: at most one per worker slot), else the oldest
 * due job, read straight off the queue's index (no sort, however long the queue). Parameters: owner,
 * until, at, at, at. On PostgreSQL each candidate is locked as it is read and rows another claim has
 * locked are skipped (`FOR UPDATE SKIP LOCKED`), so concurrent claims on several nodes take different
 * jobs without waiting on one another; on SQLite the claim runs under the one write lock.
 */
export const claimSql = (dialect: Store['dialect']) => {
  const lock = dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''
  return `
  UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?
  WHERE id = coalesce(
    (SELECT id FROM jobs WHERE status = 'running' AND lease_expires_at <= ? ORDER BY run_after, created_at LIMIT 1${lock}),
    (SELECT id FROM jobs WHERE status = 'queued' AND run_after <= ? ORDER BY run_after, created_at LIMIT 1${lock}))
  RETURNING *`
}
/** The claim as SQLite runs it (its query plan is tested). */
export const CLAIM = claimSql('sqlite')

/** The row still names this run: same owner, same claim, still running. Parameters: id, owner, attempt. */
const HELD = `id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'`

export type JobsRepo = ReturnType<typeof createJobsRepo>

/** PostgreSQL returns BIGINT and counts as strings; the row as the rest of the code reads it. */
const jobRow = (r: JobRow | null): JobRow | null => (r ? { ...r, attempts: Number(r.attempts) } : null)
const workerRow = (r: WorkerRow): WorkerRow => ({ ...r, pid: Number(r.pid), slots: Number(r.slots) })

/**
 * The durable queue and its leases, on either back end. Every fenced write is an UPDATE whose WHERE
 * names the run (owner and attempt), so it locks the row it checks, in the transaction that makes the
 * run's other writes (which join it: ambient transactions).
 */
export function createJobsRepo(store: Store) {
  const claim = claimSql(store.dialect)
  const held = (lease: Lease) => [lease.jobId, lease.owner, lease.attempt]
  return {
    dialect: store.dialect,

    /**
     * Queues a job (due at `runAfter`, by default at once), in the caller's transaction if there is one. On PostgreSQL the same transaction
     * sends a NOTIFY on JOBS_CHANNEL, delivered to every listening process when it commits (and
     * never if it rolls back), so idle workers on every node look at once.
     */
    enqueue: (id: string, noteId: string, kind: string, at: string, runAfter: string = at): Promise<void> => store.transaction(async () => {
      await store.run(`INSERT INTO jobs (id, note_id, kind, status, attempts, run_after, created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?)`, [id, noteId, kind, runAfter, at, at])
      if (store.dialect === 'postgres') await store.get(`SELECT pg_notify('${JOBS_CHANNEL}', ?)`, [id])
    }),

    /**
     * Takes the oldest claimable job for `owner` until `until`, or null. One statement (under the
     * write lock on SQLite, on rows locked as they are chosen on PostgreSQL), so two workers never take
     * the same job; a job whose worker stopped heartbeating is taken like a queued one.
     */
    claim: async (owner: string, at: string, until: string): Promise<JobRow | null> => {
      const take = async () => jobRow(await store.get<JobRow>(claim, [owner, until, at, at, at]))
      // SQLite: under BEGIN IMMEDIATE, so a busy database is waited for before reading, never failed
      // halfway; PostgreSQL: one statement is its own transaction
      return store.dialect === 'sqlite' ? store.transaction(take, 'write') : take()
    },
    /** Whether a claim at `at` would find a job: a read, so idle workers look without taking the write lock. */
    anyDue: async (at: string): Promise<boolean> => (await store.get(`SELECT 1 AS one FROM jobs WHERE ${CLAIMABLE} LIMIT 1`, [at, at])) !== null,
    /**
     * A worker process's heartbeat, one transaction: its row in `workers` (written on the first beat)
     * and the leases of the runs it holds, extended to `until`. Returns the leases it no longer holds
     * (another worker took the job after the lease ran out): their work should stop.
     */
    heartbeat: (worker: WorkerRow, leases: Lease[], until: string): Promise<Lease[]> => store.transaction(async () => {
      await store.run(`INSERT INTO workers (id, host, pid, pid_namespace, slots, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
      [worker.id, worker.host, worker.pid, worker.pid_namespace, worker.slots, worker.started_at, worker.heartbeat_at])
      const lost: Lease[] = []
      for (const lease of leases) {
        if ((await store.run(`UPDATE jobs SET lease_expires_at = ? WHERE ${HELD}`, [until, ...held(lease)])) !== 1) lost.push(lease)
      }
      return lost
    }, 'write'),
    /**
     * `write` in one transaction, only while the run still holds its lease; otherwise nothing is written
     * and LeaseLostError is thrown. The writes `write` makes through any repository join the transaction.
     */
    fenced<T>(lease: Lease, at: string, write: () => T | Promise<T>): Promise<T> {
      return store.transaction(async () => {
        if ((await store.run(`UPDATE jobs SET updated_at = ? WHERE ${HELD}`, [at, ...held(lease)])) !== 1) throw new LeaseLostError(lease)
        return await write()
      }, 'write')
    },
    /**
     * Ends the run (done or failed) and makes its last writes (the result, or the failure and the
     * refund) in the same transaction, only while it holds the lease; else LeaseLostError, nothing written.
     */
    end(lease: Lease, status: 'done' | 'failed', error: string | null, at: string, write: () => unknown = () => {}): Promise<void> {
      return store.transaction(async () => {
        const ended = await store.run(`UPDATE jobs SET status = ?, last_error = coalesce(?, last_error), lease_expires_at = NULL, updated_at = ? WHERE ${HELD}`, [status, error, at, ...held(lease)])
        if (ended !== 1) throw new LeaseLostError(lease)
        await write()
      }, 'write')
    },
    /** Back to the queue, to run at `runAfter` (now: a release); false when the run no longer held it. */
    retry: async (lease: Lease, runAfter: string, error: string, at: string): Promise<boolean> =>
      (await store.run(`UPDATE jobs SET status = 'queued', run_after = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE ${HELD}`,
        [runAfter, error, at, ...held(lease)])) === 1,
    /** The jobs a worker that is known to be gone was running go back to the queue at once. */
    releaseOwner: (owner: string, at: string): Promise<number> =>
      store.run(`UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE status = 'running' AND lease_owner = ?`, [at, owner]),
    get: async (id: string): Promise<JobRow | null> => jobRow(await store.get<JobRow>('SELECT * FROM jobs WHERE id = ?', [id])),
    latestForNote: async (noteId: string): Promise<JobRow | null> =>
      jobRow(await store.get<JobRow>('SELECT * FROM jobs WHERE note_id = ? ORDER BY created_at DESC LIMIT 1', [noteId])),
    /**
     * How far the database's clock is ahead of `localMs` (negative: behind), in ms, and the round trip
     * it was measured over (the offset is right to within half of it): of three measures, the one with
     * the shortest round trip. 0 on SQLite, whose only clock is this machine's.
     */
    async clockOffset(localMs: () => number): Promise<{ offsetMs: number; roundTripMs: number }> {
      if (store.dialect !== 'postgres') return { offsetMs: 0, roundTripMs: 0 }
      let best = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY }
      for (let i = 0; i < 3; i++) {
        const before = localMs()
        const row = (await store.get<{ ms: number | string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms'))!
        const after = localMs()
        if (after - before < best.roundTripMs) best = { offsetMs: Math.round(Number(row.ms) - (before + after) / 2), roundTripMs: after - before }
      }
      return best
    },
    /** SQLite: moves when another connection commits (this connection's own commits leave it as it is). */
    dataVersion: async (): Promise<number> => Number((await store.get<{ data_version: number }>('PRAGMA data_version'))!.data_version),
    /**
     * PostgreSQL: calls `onQueued` for every job queued on any node (after its commit), and `onListen`
     * once listening (again after a reconnect, when notices may have been missed). Null on SQLite,
     * which has no notifications (watch `dataVersion`). Resolves to the function that stops listening.
     */
    async listen(onQueued: () => void, onListen: () => void): Promise<(() => Promise<void>) | null> {
      if (!(store instanceof PostgresStore)) return null
      const subscription = await store.sql.listen(JOBS_CHANNEL, () => onQueued(), onListen)
      return () => subscription.unlisten()
    },

    workers: {
      remove: async (id: string): Promise<void> => { await store.run('DELETE FROM workers WHERE id = ?', [id]) },
      list: async (): Promise<WorkerRow[]> => (await store.all<WorkerRow>('SELECT * FROM workers ORDER BY started_at, id')).map(workerRow),
      /** Worker processes whose last heartbeat is at or after `since`. */
      liveSince: async (since: string): Promise<number> => Number((await store.get<{ n: number }>('SELECT count(*) AS n FROM workers WHERE heartbeat_at >= ?', [since]))!.n),
    },
  }
}
