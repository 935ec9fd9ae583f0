/** The data-access interface both stores implement (store.ts says how they differ and opens one). */
import type { Dialect } from './dialect'

export type SqlValue = string | number | bigint | boolean | null | Uint8Array

export interface Queryable {
  /** every row */
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>
  /** the first row, or null */
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null>
  /** a statement that returns no rows: the number of rows it changed */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>
}

/** Everything a store does but `choose` (store.ts), which names the two stores. */
export interface StoreCommon extends Queryable {
  /**
   * Runs `fn` in one transaction, its statements through the handle it is given; commits when it
   * returns, rolls back when it throws. `write` takes the write lock at once (SQLite's BEGIN
   * IMMEDIATE), so a read-then-write cannot fail halfway on a busy database.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, mode?: 'read' | 'write'): Promise<T>
  /** whether the calling async context is inside a transaction of this store */
  readonly inTransaction: boolean
  /** how this back end spells what differs, and what it can do */
  readonly sql: Dialect
  /**
   * Announces `payload` on `channel` to every listening connection when the calling transaction
   * commits (never if it rolls back); nothing where the dialect does not notify (`sql.notifies`).
   */
  notify(channel: string, payload: string): Promise<void>
  /**
   * Calls `onNotice` for every notice on `channel` (after its commit) and `onListen` once listening
   * (again after a reconnect, when notices may have been missed). Resolves to the function that stops
   * listening, or null where the dialect does not notify: watch `changeCounter` instead.
   */
  listen(channel: string, onNotice: () => void, onListen: () => void): Promise<(() => Promise<void>) | null>
  /** A number that moves when another connection commits (SQLite's data_version); constant where notices exist. */
  changeCounter(): Promise<number>
  /**
   * How far the database's clock is ahead of `localMs` (negative: behind), in ms, and the round trip
   * it was measured over (the offset is right to within half of it): of three measures, the one with
   * the shortest round trip. 0 where the database's clock is this machine's (`sql.remoteClock` false).
   */
  clockOffset(localMs: () => number): Promise<{ offsetMs: number; roundTripMs: number }>
  /**
   * A stamp for results read from this store and kept in memory (ReadCache): it moves whenever the
   * database may have changed, as far as this process can tell. SQLite: any write of this connection,
   * or a commit of another (data_version). PostgreSQL, where other nodes' writes cannot be seen: every
   * `maxAgeMs`, so nothing is trusted for longer.
   */
  readStamp(maxAgeMs: number): () => string
  /**
   * Whether the database answers a statement now: false when it throws DatabaseUnavailableError or
   * takes longer than `timeoutMs` (a server that hangs rather than refuses). For health.
   */
  reachable(timeoutMs: number): Promise<boolean>
  /** What the connections of this store are doing now, for the metrics (GET /metrics). */
  activity(): StoreActivity
  close(): Promise<void>
}

/** The connections of a store now: how many it may hold, transactions holding one, statements awaiting their answer. */
export interface StoreActivity {
  maxConnections: number
  openTransactions: number
  queriesInFlight: number
}
