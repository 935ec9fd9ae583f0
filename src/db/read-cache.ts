import type { Database } from './database'
import { commitCounter } from './wal-index'

/** How long a read of `data_version` is trusted: another process's commit is seen within this. */
const OTHER_WRITERS_MS = 1

/**
 * A stamp that changes whenever the database's content may have changed.
 *
 * In WAL mode (every database file notesvc opens): the count of commits seen in the WAL-index header
 * (db/wal-index.ts), which every commit moves, of this connection or any other, in any process, before
 * it returns. No statement and no time window: a key revoked by the CLI is refused on the very next
 * request. (Writes of a transaction still open move it when they commit.)
 *
 * Otherwise (`:memory:`): `total_changes()` counts this connection's own writes and is read every time
 * (a fraction of a microsecond); `data_version` moves when another connection commits, and costs a
 * few microseconds, so it is read at most once a millisecond.
 */
export function changeStamp(db: Database, now: () => number = performance.now.bind(performance)): () => string {
  const commits = commitCounter(db)
  if (commits) {
    // the same string while nothing is committed: ReadCache compares it without building another
    let at = 0
    let stamp = ''
    return () => {
      const c = commits()
      if (c !== at) {
        at = c
        stamp = `commit ${c}`
      }
      return stamp
    }
  }
  const changes = db.query<[number], []>('SELECT total_changes()')
  const dataVersion = db.query<[number], []>('PRAGMA data_version')
  let version = 0
  let readAt = -Infinity
  return () => {
    const t = now()
    if (t - readAt >= OTHER_WRITERS_MS) {
      version = dataVersion.values()[0]![0] as number
      readAt = t
    }
    return `${changes.values()[0]![0]}:${version}`
  }
}

/**
 * Results of read-only queries, kept until the database changes. Any write anywhere empties it, so it
 * never serves what the database no longer says; it pays off for what is read far more often than
 * written (listing a library, checking a key).
 */
export class ReadCache<V> {
  private stamp = ''
  private entries = new Map<string, V>()
  /** moved by `forget`: part of every stamp, so a value computed before it is not kept */
  private generation = 0

  /** `enabled: false` computes every time (for measuring the uncached path, or ruling the cache out). */
  constructor(private readonly currentStamp: () => string, private readonly enabled = true, private readonly maxEntries = 1000) {}

  /**
   * Forgets every entry now: for a write of this process that the stamp may not show at once (on
   * PostgreSQL the key cache's stamp is the clock's half-second).
   */
  forget(): void {
    this.generation++
    this.entries.clear()
  }

  private raw = ''
  private rawGeneration = -1
  private composed = ''

  /** `generation:stamp`, built again only when either moved (a stamp repeats the same string while nothing changes) */
  private now(): string {
    const raw = this.currentStamp()
    if (raw !== this.raw || this.generation !== this.rawGeneration) {
      this.raw = raw
      this.rawGeneration = this.generation
      this.composed = `${this.generation}:${raw}`
    }
    return this.composed
  }

  /** The current stamp, with the entries of an older one dropped. */
  private refresh(): string {
    const stamp = this.now()
    if (stamp !== this.stamp) {
      this.entries.clear()
      this.stamp = stamp
    }
    return stamp
  }

  private keep(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear()
    this.entries.set(key, value)
  }

  /** The value kept under `key` at the current stamp, without computing one; undefined when none is. */
  peek(key: string): V | undefined {
    if (!this.enabled) return undefined
    this.refresh()
    return this.entries.get(key)
  }

  get(key: string, compute: () => V): V {
    if (!this.enabled) return compute()
    this.refresh()
    let value = this.entries.get(key)
    if (value === undefined) this.keep(key, (value = compute()))
    return value
  }

  /**
   * `get` for a computation that awaits (a query through the store). A value is kept only if the
   * stamp did not move while it was computed, so a write in between never leaves a stale entry.
   */
  async getAsync(key: string, compute: () => Promise<V>): Promise<V> {
    if (!this.enabled) return compute()
    const stamp = this.refresh()
    const cached = this.entries.get(key)
    if (cached !== undefined) return cached
    const value = await compute()
    if (this.now() === stamp && this.stamp === stamp) this.keep(key, value)
    return value
  }
}
