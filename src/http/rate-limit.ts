import type { RateClass } from '../config'
import type { Clock } from '../clock'
import type { Store } from '../db/store'

const WINDOW_MS = 60_000

export interface RateDecision {
  limit: number
  remaining: number
  /** seconds until the window resets */
  resetSeconds: number
  allowed: boolean
}

/**
 * Fixed 60-second windows counted per key (a credential, or a client address for the public routes)
 * and per class: a window starts at the key's first request in that class and lasts 60 seconds.
 */
export interface RateLimiter {
  /** Counts one request of `key` in class `cls` and says whether it is allowed. */
  hit(key: string, cls: RateClass): Promise<RateDecision>
}

function decision(limit: number, count: number, start: number, now: number): RateDecision {
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)),
    allowed: count <= limit,
  }
}

/**
 * The limiter the store calls for: on SQLite one process serves a data folder, so the windows are
 * counted in its memory; on PostgreSQL several nodes serve one database, so they are counted in the
 * database, where every node sees every request.
 */
/**
 * One more value for the rate-limit statement to read in the same round trip (PostgreSQL), handed to
 * `remember` (see db/request-reads.ts): the composition root says what, the limiter knows no table but its own.
 */
export interface AlsoRead {
  /** a scalar subquery, read as text */
  sql: string
  remember: (value: string) => void
}

export function createRateLimiter(limits: Record<RateClass, number>, clock: Clock, store: Pick<Store, 'dialect' | 'run' | 'get'>, alsoRead?: AlsoRead): RateLimiter {
  return store.dialect === 'postgres' ? new SharedRateLimiter(limits, clock, store, alsoRead) : new MemoryRateLimiter(limits, clock)
}

/** Windows in this process's memory. Memory is bounded by the number of keys active in the current window. */
export class MemoryRateLimiter implements RateLimiter {
  private windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  constructor(private limits: Record<RateClass, number>, private clock: Clock) {}

  async hit(key: string, cls: RateClass): Promise<RateDecision> {
    const now = this.clock.now().getTime()
    if (now - this.lastSweep > WINDOW_MS) this.sweep(now)
    const id = `${cls}\u0000${key}`
    let w = this.windows.get(id)
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 }
      this.windows.set(id, w)
    }
    const limit = this.limits[cls]
    // A refused request is not counted, so the count stays at the limit.
    if (w.count < limit) w.count++
    else return decision(limit, limit + 1, w.start, now)
    return decision(limit, w.count, w.start, now)
  }

  private sweep(now: number) {
    this.lastSweep = now
    for (const [id, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(id)
  }
}

/**
 * Windows in the `rate_windows` table (migration 7), shared by every node on the database. One
 * atomic upsert per request both starts a new window (when the key's last one is over) and counts
 * the request, so two nodes counting the same key at once cannot both take the last request of its
 * limit. The count stops at limit + 1 (refused requests are not counted further). Windows that are
 * over are deleted at most once a window per node.
 */
export class SharedRateLimiter implements RateLimiter {
  private lastSweep = 0
  private statement: string

  constructor(private limits: Record<RateClass, number>, private clock: Clock, private store: Pick<Store, 'run' | 'get'>, private alsoRead?: AlsoRead) {
    const upsert = `INSERT INTO rate_windows (key, class, window_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (key, class) DO UPDATE SET
         window_start = CASE WHEN rate_windows.window_start <= ? THEN excluded.window_start ELSE rate_windows.window_start END,
         count = CASE WHEN rate_windows.window_start <= ? THEN 1 ELSE LEAST(rate_windows.count + 1, ?) END
       RETURNING count, window_start`
    this.statement = alsoRead
      ? `WITH hit AS (${upsert}) SELECT hit.count, hit.window_start, (${alsoRead.sql})::text AS also FROM hit`
      : upsert
  }

  async hit(key: string, cls: RateClass): Promise<RateDecision> {
    const now = this.clock.now().getTime()
    const over = new Date(now - WINDOW_MS).toISOString()
    if (now - this.lastSweep > WINDOW_MS) {
      this.lastSweep = now
      await this.store.run('DELETE FROM rate_windows WHERE window_start <= ?', [over])
    }
    const limit = this.limits[cls]
    const row = await this.store.get<{ count: number | string; window_start: string; also?: string | null }>(
      this.statement,
      [key, cls, new Date(now).toISOString(), over, over, limit + 1],
    )
    if (this.alsoRead && row!.also != null) this.alsoRead.remember(row!.also)
    return decision(limit, Number(row!.count), Date.parse(row!.window_start), now)
  }
}
