import type { Store } from '../db/store'

/**
 * The one leased queue of notesvc, over any table with its columns (the upload jobs in `jobs`, the
 * webhook events in `webhook_outbox`; migration 13 gave both the same shape). A row is `queued` until
 * due (`run_after`), then `running` under a lease: claimed by one worker process (`lease_owner`) until
 * `lease_expires_at`, which the owner's heartbeat extends; then `done` or `failed`. A row whose lease
 * ran out (its worker died) is claimed again like a queued one, and counted as a takeover. Every claim
 * adds one to `attempts`, so (`lease_owner`, `attempts`) names one run of a row: the fencing token.
 * Every write of a run is made only while the row still names that run.
 *
 * On PostgreSQL the claim locks each candidate as it reads it and skips the rows another node's claim
 * holds (`store.sql.skipLocked`); on SQLite it runs under the one write lock (BEGIN IMMEDIATE).
 */
export interface QueueRow {
  id: string
  status: 'queued' | 'running' | 'done' | 'failed'
  /** how many times the row was claimed; with the owner it names one run (the fencing token) */
  attempts: number
  /** how many runs ended because their worker died (lease ran out, or its process was found gone) */
  takeovers: number
  run_after: string
  last_error: string | null
  /** the worker process (`workers.id`) that claimed it last */
  lease_owner: string | null
  /** while running: when the lease runs out unless a heartbeat extends it */
  lease_expires_at: string | null
  created_at: string
  updated_at: string
}

/** The tables that hold a leased queue. */
export type QueueTable = 'jobs' | 'webhook_outbox' | 'recurring_jobs'

/** One run of a row: who claimed it and which claim it was. Writes of the run are fenced by both. */
export interface Lease {
  id: string
  owner: string
  attempt: number
}

export const leaseOf = (row: QueueRow): Lease => ({ id: row.id, owner: row.lease_owner!, attempt: row.attempts })

/** A write of a run whose lease another worker has taken since (or that ended): nothing was written. */
export class LeaseLostError extends Error {
  constructor(lease: Lease) {
    super(`${lease.id}: attempt ${lease.attempt} of worker ${lease.owner} no longer holds the lease`)
  }
}

/**
 * When a failed run is tried again, one policy for every queue: after attempt n, wait
 * `delaysMs[n - 1]` (the last delay repeats), unless `maxAttempts` runs were made or the next attempt
 * would come more than `giveUpAfterMs` after the first. Returns the time of the next attempt, or null:
 * give up.
 */
export interface RetryPolicy {
  delaysMs: readonly number[]
  maxAttempts: number
  giveUpAfterMs: number
}

export function nextAttemptAt(policy: RetryPolicy, attempt: number, firstAttemptAtMs: number, nowMs: number): number | null {
  if (attempt >= policy.maxAttempts) return null
  const due = nowMs + policy.delaysMs[Math.min(Math.max(attempt, 1), policy.delaysMs.length) - 1]!
  return due - firstAttemptAtMs > policy.giveUpAfterMs ? null : due
}

/** How many times a row's worker may die under it before the row fails instead of running again. */
export const DEFAULT_MAX_TAKEOVERS = 3

/** PostgreSQL returns BIGINT and counts as strings; the row as the rest of the code reads it. */
function numbers<Row extends QueueRow>(r: Row): Row {
  return { ...r, attempts: Number(r.attempts), takeovers: Number(r.takeovers) }
}

/**
 * A cap on the rows of one kind running at once (the webhook outbox: per endpoint, per account): at
 * most `max` rows that share the value of `key` may be running on a lease that has not run out. A
 * claim skips the rows whose value is at its cap, so the queue moves on to other kinds instead of
 * waiting behind them.
 */
export interface InFlightCap {
  /** SQL: the value a row shares with others of its kind, over the row named `row` (a table or alias) */
  key: (row: string) => string
  /** at most this many running rows of one value (a whole number, at least 1) */
  max: number
}

export function createLeasedQueue<Row extends QueueRow>(store: Store, table: QueueTable, options: { inFlightCaps?: readonly InFlightCap[] } = {}) {
  const caps = options.inFlightCaps ?? []
  for (const cap of caps) if (!Number.isInteger(cap.max) || cap.max < 1) throw new Error(`${table}: an in-flight cap must be a whole number of at least 1, not ${cap.max}`)
  /** The row still names this run: same owner, same claim, still running. Parameters: id, owner, attempt. */
  const HELD = `id = ? AND lease_owner = ? AND attempts = ? AND status = 'running'`
  const held = (lease: Lease) => [lease.id, lease.owner, lease.attempt]
  /**
   * ` AND` the candidate row (the unaliased table) is under every cap: its value is not one of those
   * already running `max` times on a live lease. Each cap reads the running rows only (the `status`
   * prefix of the ready index: at most one per sender slot), once per statement. One parameter per
   * cap: now.
   */
  const underCaps = caps.map(cap => ` AND ${cap.key(table)} NOT IN (SELECT ${cap.key('busy')} FROM ${table} busy WHERE busy.status = 'running' AND busy.lease_expires_at > ? AND ${cap.key('busy')} IS NOT NULL GROUP BY 1 HAVING count(*) >= ${cap.max})`).join('')
  const nows = (at: string) => caps.map(() => at)
  /**
   * The claim: runs whose lease ran out first (few rows: at most one per worker slot), then the oldest
   * due rows, each part read straight off the `(status, run_after, created_at)` index (no sort, however
   * long the queue), skipping the kinds at their cap. Parameters: owner, lease end, now, now, (now per
   * cap), limit, now, (now per cap), limit, limit.
   */
  const claimSql = `
    UPDATE ${table} SET status = 'running', attempts = attempts + 1,
      takeovers = takeovers + CASE WHEN status = 'running' THEN 1 ELSE 0 END,
      lease_owner = ?, lease_expires_at = ?, updated_at = ?
    WHERE id IN (SELECT id FROM (
      SELECT id FROM (SELECT id FROM ${table} WHERE status = 'running' AND lease_expires_at <= ?${underCaps} ORDER BY run_after, created_at LIMIT ?${store.sql.skipLocked}) expired
      UNION ALL
      SELECT id FROM (SELECT id FROM ${table} WHERE status = 'queued' AND run_after <= ?${underCaps} ORDER BY run_after, created_at LIMIT ?${store.sql.skipLocked}) due
    ) candidates LIMIT ?)
    RETURNING *`
  /** Rows that may be claimed at `?` (given twice, then once per cap): queued and due, or running on a lease that ran out, and under the caps. */
  const claimable = `((status = 'queued' AND run_after <= ?) OR (status = 'running' AND lease_expires_at <= ?))${underCaps}`
  /**
   * Under caps, claims run one at a time across all connections (a named lock on PostgreSQL; SQLite's
   * one writer), each reading the running rows the last one committed: two claims on two nodes at the
   * same instant cannot both take a row of one kind at its last free place.
   */
  const serialize = caps.length > 0 && store.sql.namedLock !== null ? store.sql.namedLock : null

  return {
    /** the claim statement, for tests of its plan */
    claimSql,

    /** Whether a claim at `at` would find a row: a read, so idle workers look without taking the write lock. */
    anyDue: async (at: string): Promise<boolean> => (await store.get(`SELECT 1 AS one FROM ${table} WHERE ${claimable} LIMIT 1`, [at, at, ...nows(at)])) !== null,

    /**
     * Takes up to `limit` claimable rows for `owner` until `until`, expired leases first, then the
     * oldest due. One statement under the write lock (SQLite) or on rows locked as they are chosen
     * (PostgreSQL), so two workers never take the same row. A queue with in-flight caps takes one row
     * per claim (whatever `limit` says), so that the caps hold within a claim too.
     */
    claim: (owner: string, at: string, until: string, limit = 1): Promise<Row[]> => {
      const n = caps.length > 0 ? 1 : limit
      return store.transaction(async () => {
        if (serialize) await store.get(serialize, [`claim:${table}`])
        return (await store.all<Row>(claimSql, [owner, until, at, at, ...nows(at), n, at, ...nows(at), n, n])).map(numbers)
      }, 'write')
    },

    /** Extends the leases this process holds to `until`; returns those it no longer holds (their work should stop). */
    async extend(leases: Lease[], until: string): Promise<Lease[]> {
      const lost: Lease[] = []
      for (const lease of leases) {
        if ((await store.run(`UPDATE ${table} SET lease_expires_at = ? WHERE ${HELD}`, [until, ...held(lease)])) !== 1) lost.push(lease)
      }
      return lost
    },

    /**
     * `write` in one transaction, only while the run still holds its lease; otherwise nothing is
     * written and LeaseLostError is thrown. The writes `write` makes through any repository join it.
     */
    fenced<T>(lease: Lease, at: string, write: () => T | Promise<T>): Promise<T> {
      return store.transaction(async () => {
        if ((await store.run(`UPDATE ${table} SET updated_at = ? WHERE ${HELD}`, [at, ...held(lease)])) !== 1) throw new LeaseLostError(lease)
        return await write()
      }, 'write')
    },

    /**
     * Ends the run (done or failed) and makes its last writes (the result, or the failure and the
     * refund) in the same transaction, only while it holds the lease; else LeaseLostError, nothing written.
     */
    end(lease: Lease, status: 'done' | 'failed', error: string | null, at: string, write: () => unknown = () => {}): Promise<void> {
      return store.transaction(async () => {
        const ended = await store.run(`UPDATE ${table} SET status = ?, last_error = coalesce(?, last_error), lease_expires_at = NULL, updated_at = ? WHERE ${HELD}`, [status, error, at, ...held(lease)])
        if (ended !== 1) throw new LeaseLostError(lease)
        await write()
      }, 'write')
    },

    /**
     * Back to the queue, due at `runAfter` (now: a release), with the run's other writes in the same
     * transaction; false (nothing written) when the run no longer held it.
     */
    retry: (lease: Lease, runAfter: string, error: string, at: string, write: () => unknown = () => {}): Promise<boolean> => store.transaction(async () => {
      const queued = await store.run(`UPDATE ${table} SET status = 'queued', run_after = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE ${HELD}`,
        [runAfter, error, at, ...held(lease)])
      if (queued !== 1) return false
      await write()
      return true
    }, 'write'),

    /**
     * A recurring row's run ended (well or not): back to the queue, due at its next run, with the run's
     * other writes in the same transaction; `error` is kept as the last one when given. False (nothing
     * written) when the run no longer held it.
     */
    requeue: (lease: Lease, runAfter: string, error: string | null, at: string): Promise<boolean> => store.transaction(async () =>
      (await store.run(`UPDATE ${table} SET status = 'queued', run_after = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE ${HELD}`,
        [runAfter, error, at, ...held(lease)])) === 1, 'write'),

    /**
     * The rows a worker known to be gone was running go back to the queue at once, each counted as a
     * takeover (its worker died under it, as when its lease runs out).
     */
    releaseOwner: (owner: string, at: string): Promise<number> =>
      store.run(`UPDATE ${table} SET status = 'queued', takeovers = takeovers + 1, lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE status = 'running' AND lease_owner = ?`, [at, owner]),

    /**
     * The queue now, for the metrics: rows queued (due or waiting for a retry) and running, and the
     * `run_after` of the oldest queued row already due at `at` (null when none is): how long the
     * queue has kept ready work waiting. Read off the `status` prefix of the ready index.
     */
    async depth(at: string): Promise<{ queued: number; running: number; oldestDueAt: string | null }> {
      const rows = await store.all<{ status: string; n: number | string; oldest: string | null }>(
        `SELECT status, count(*) AS n, min(CASE WHEN run_after <= ? THEN run_after END) AS oldest FROM ${table} WHERE status IN ('queued', 'running') GROUP BY status`, [at])
      const of = (status: string) => rows.find(r => r.status === status)
      return { queued: Number(of('queued')?.n ?? 0), running: Number(of('running')?.n ?? 0), oldestDueAt: of('queued')?.oldest ?? null }
    },

    get: async (id: string): Promise<Row | null> => {
      const r = await store.get<Row>(`SELECT * FROM ${table} WHERE id = ?`, [id])
      return r ? numbers(r) : null
    },
  }
}
