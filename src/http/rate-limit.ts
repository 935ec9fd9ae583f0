import type { RateClass } from '../config'
import { millisNow, type Clock } from '../clock'

const WINDOW_MS = 60_000

export interface RateDecision {
  limit: number
  remaining: number
  /** seconds until the window resets */
  resetSeconds: number
  allowed: boolean
  /**
   * A value the limiter's statement read alongside the count, for a later step of the same request
   * (the composition root says which: the notes' revision counter, saving the list a round trip)
   */
  alongside?: string
  /** the class is not limited here (NOTESVC_METERING=off for processing): no X-RateLimit headers */
  unlimited?: boolean
}

/**
 * Fixed 60-second windows counted per key (a credential, or a client address for the public routes)
 * and per class: a window starts at the key's first request in that class and lasts 60 seconds.
 */
export interface RateLimiter {
  /** Counts one request of `key` in class `cls` and says whether it is allowed. */
  hit(key: string, cls: RateClass): Promise<RateDecision>
  /** `hit` answered synchronously, by a limiter that counts in this process's memory */
  hitNow?(key: string, cls: RateClass): RateDecision
}

function decision(limit: number, count: number, start: number, now: number): RateDecision {
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)),
    allowed: count <= limit,
  }
}

/** Windows in this process's memory. Memory is bounded by the number of keys active in the current window. */
export class MemoryRateLimiter implements RateLimiter {
  /**
   * One map of windows per class, keyed by the caller's key as given: no key string is built per
   * request (admission passes the same string for a principal each time, so its hash is computed once).
   */
  private windows = new Map<RateClass, Map<string, { start: number; count: number }>>()
  private lastSweep = 0

  constructor(private limits: Record<RateClass, number>, private clock: Clock) {}

  async hit(key: string, cls: RateClass): Promise<RateDecision> {
    return this.hitNow(key, cls)
  }

  hitNow(key: string, cls: RateClass): RateDecision {
    const now = millisNow(this.clock)
    if (now - this.lastSweep > WINDOW_MS) this.sweep(now)
    let windows = this.windows.get(cls)
    if (windows === undefined) this.windows.set(cls, (windows = new Map()))
    let w = windows.get(key)
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 }
      windows.set(key, w)
    }
    const limit = this.limits[cls]
    // A refused request is not counted, so the count stays at the limit.
    if (w.count < limit) w.count++
    else return decision(limit, limit + 1, w.start, now)
    return decision(limit, w.count, w.start, now)
  }

  private sweep(now: number) {
    this.lastSweep = now
    for (const windows of this.windows.values()) for (const [key, w] of windows) if (now - w.start >= WINDOW_MS) windows.delete(key)
  }
}

/**
 * Where shared windows are counted (`db/rate-windows.ts`): one atomic statement per request both
 * starts a new window (when the key's last one began at or before `over`) and counts the request, so
 * two nodes counting the same key at once cannot both take the last request of its limit.
 */
export interface RateWindows {
  /**
   * Counts one request of `key` in `cls` at `now`; the count stops at `cap` (refused requests are not
   * counted further). Returns the window's count and start, and the value read alongside, if any.
   */
  hit(key: string, cls: RateClass, now: string, over: string, cap: number): Promise<{ count: number; windowStart: string; alongside?: string }>
  /** Deletes the windows that began at or before `over`. */
  sweep(over: string): Promise<void>
}

/**
 * Windows kept where every node sees every request (the `rate_windows` table of a database several
 * nodes share). Windows that are over are deleted at most once a window per node.
 */
export class SharedRateLimiter implements RateLimiter {
  private lastSweep = 0

  constructor(private limits: Record<RateClass, number>, private clock: Clock, private windows: RateWindows) {}

  async hit(key: string, cls: RateClass): Promise<RateDecision> {
    const now = millisNow(this.clock)
    const over = new Date(now - WINDOW_MS).toISOString()
    if (now - this.lastSweep > WINDOW_MS) {
      this.lastSweep = now
      await this.windows.sweep(over)
    }
    const limit = this.limits[cls]
    const w = await this.windows.hit(key, cls, new Date(now).toISOString(), over, limit + 1)
    return { ...decision(limit, w.count, Date.parse(w.windowStart), now), alongside: w.alongside }
  }
}

/**
 * A limiter with some classes not limited at all (NOTESVC_METERING=off: the processing class): their
 * requests are allowed and not counted; every other class is `inner`'s.
 */
export function withUnlimitedClasses(inner: RateLimiter, unlimited: readonly RateClass[]): RateLimiter {
  if (unlimited.length === 0) return inner
  const free: RateDecision = { limit: 0, remaining: 0, resetSeconds: 0, allowed: true, unlimited: true }
  const limited: RateLimiter = {
    hit: (key, cls) => (unlimited.includes(cls) ? Promise.resolve(free) : inner.hit(key, cls)),
  }
  if (inner.hitNow) {
    const hitNow = inner.hitNow.bind(inner)
    limited.hitNow = (key, cls) => (unlimited.includes(cls) ? free : hitNow(key, cls))
  }
  return limited
}
