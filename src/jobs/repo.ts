import { transactions, type Database } from '../db/database'

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

/** Jobs that may be claimed at `$at`: queued and due, or running on a lease that ran out. */
const CLAIMABLE = `(status = 'queued' AND run_after <= $at) OR (status = 'running' AND lease_expires_at <= $at)`
/**
 * The claim: a run whose lease ran out first (few rows: at most one per worker slot), else the oldest
 * due job, read straight off the queue's index (no sort, however long the queue).
 */
export const CLAIM = `
  UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = $owner, lease_expires_at = $until, updated_at = $at
  WHERE id = coalesce(
    (SELECT id FROM jobs WHERE status = 'running' AND lease_expires_at <= $at ORDER BY run_after, created_at LIMIT 1),
    (SELECT id FROM jobs WHERE status = 'queued' AND run_after <= $at ORDER BY run_after, created_at LIMIT 1))
  RETURNING *`
/** The row still names this run: same owner, same claim, still running. */
const HELD = `id = $id AND lease_owner = $owner AND attempts = $attempt AND status = 'running'`

export type JobsRepo = ReturnType<typeof createJobsRepo>

/**
 * The durable queue and its leases. Each statement is written so that it carries over to PostgreSQL
 * as it stands: the claim's inner SELECT gains `FOR UPDATE SKIP LOCKED`; every fenced write is an
 * UPDATE whose WHERE names the run, so it locks the row it checks.
 */
export function createJobsRepo(db: Database) {
  const q = {
    insert: db.query(`INSERT INTO jobs (id, note_id, kind, status, attempts, run_after, created_at, updated_at) VALUES ($id, $note_id, $kind, 'queued', 0, $at, $at, $at)`),
    claim: db.query<JobRow, { at: string; owner: string; until: string }>(CLAIM),
    due: db.query<{ one: number }, { at: string }>(`SELECT 1 AS one FROM jobs WHERE ${CLAIMABLE} LIMIT 1`),
    extend: db.query(`UPDATE jobs SET lease_expires_at = $until WHERE ${HELD}`),
    touch: db.query(`UPDATE jobs SET updated_at = $at WHERE ${HELD}`),
    end: db.query(`UPDATE jobs SET status = $status, last_error = coalesce($error, last_error), lease_expires_at = NULL, updated_at = $at WHERE ${HELD}`),
    retry: db.query(`UPDATE jobs SET status = 'queued', run_after = $run_after, last_error = $error, lease_owner = NULL, lease_expires_at = NULL, updated_at = $at WHERE ${HELD}`),
    releaseOwner: db.query(`UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires_at = NULL, updated_at = $at WHERE status = 'running' AND lease_owner = $owner`),
    get: db.query<JobRow, [string]>('SELECT * FROM jobs WHERE id = ?'),
    forNote: db.query<JobRow, [string]>('SELECT * FROM jobs WHERE note_id = ? ORDER BY created_at DESC LIMIT 1'),
    dataVersion: db.query<[number], []>('PRAGMA data_version'),
    beat: db.query(`INSERT INTO workers (id, host, pid, pid_namespace, slots, started_at, heartbeat_at) VALUES ($id, $host, $pid, $pid_namespace, $slots, $started_at, $heartbeat_at)
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`),
    removeWorker: db.query('DELETE FROM workers WHERE id = ?'),
    workers: db.query<WorkerRow, []>('SELECT * FROM workers ORDER BY started_at, id'),
    live: db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM workers WHERE heartbeat_at >= ?'),
  }
  const immediate = transactions(db).write
  const held = (lease: Lease) => ({ id: lease.jobId, owner: lease.owner, attempt: lease.attempt })
  return {
    enqueue: (id: string, noteId: string, kind: string, at: string) => { q.insert.run({ id, note_id: noteId, kind, at }) },

    /**
     * Takes the oldest claimable job for `owner` until `until`, or null. One statement under the write
     * lock, so two workers never take the same job; a job whose worker stopped heartbeating is taken
     * like a queued one.
     */
    claim: (owner: string, at: string, until: string): JobRow | null => immediate(() => q.claim.get({ at, owner, until })),
    /** Whether a claim at `at` would find a job: a read, so idle workers look without taking the write lock. */
    anyDue: (at: string): boolean => q.due.get({ at }) !== null,
    /**
     * A worker process's heartbeat, one transaction: its row in `workers` (written on the first beat)
     * and the leases of the runs it holds, extended to `until`. Returns the leases it no longer holds
     * (another worker took the job after the lease ran out): their work should stop.
     */
    heartbeat: (worker: WorkerRow, leases: Lease[], until: string): Lease[] => immediate(() => {
      q.beat.run({ ...worker })
      return leases.filter(lease => q.extend.run({ ...held(lease), until }).changes !== 1)
    }),
    /**
     * `write` in one transaction, only while the run still holds its lease; otherwise nothing is written
     * and LeaseLostError is thrown.
     */
    fenced<T>(lease: Lease, at: string, write: () => T): T {
      return immediate(() => {
        if (q.touch.run({ ...held(lease), at }).changes !== 1) throw new LeaseLostError(lease)
        return write()
      })
    },
    /**
     * Ends the run (done or failed) and makes its last writes (the result, or the failure and the
     * refund) in the same transaction, only while it holds the lease; else LeaseLostError, nothing written.
     */
    end(lease: Lease, status: 'done' | 'failed', error: string | null, at: string, write: () => void = () => {}): void {
      immediate(() => {
        if (q.end.run({ ...held(lease), status, error, at }).changes !== 1) throw new LeaseLostError(lease)
        write()
      })
    },
    /** Back to the queue, to run at `runAfter` (now: a release); false when the run no longer held it. */
    retry: (lease: Lease, runAfter: string, error: string, at: string): boolean =>
      q.retry.run({ ...held(lease), run_after: runAfter, error, at }).changes === 1,
    /** The jobs a worker that is known to be gone was running go back to the queue at once. */
    releaseOwner: (owner: string, at: string): number => q.releaseOwner.run({ owner, at }).changes,
    get: (id: string) => q.get.get(id),
    latestForNote: (noteId: string) => q.forNote.get(noteId),
    /** Moves when another connection commits (this connection's own commits leave it as it is). */
    dataVersion: (): number => q.dataVersion.values()[0]![0] as number,

    workers: {
      remove: (id: string) => { q.removeWorker.run(id) },
      list: () => q.workers.all(),
      /** Worker processes whose last heartbeat is at or after `since`. */
      liveSince: (since: string): number => q.live.get(since)!.n,
    },
  }
}
