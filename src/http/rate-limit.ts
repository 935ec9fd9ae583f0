import type { RateClass } from '../config'
import type { Clock } from '../clock'

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
 * and per class. Memory is bounded by the number of keys active in the current window.
 */
export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>()
  private lastSweep = 0

  constructor(private limits: Record<RateClass, number>, private clock: Clock) {}

  hit(key: string, cls: RateClass): RateDecision {
    const now = this.clock.now().getTime()
    if (now - this.lastSweep > WINDOW_MS) this.sweep(now)
    const id = `${cls}\u0000${key}`
    let w = this.windows.get(id)
    if (!w || now - w.start >= WINDOW_MS) {
      w = { start: now, count: 0 }
      this.windows.set(id, w)
    }
    const limit = this.limits[cls]
    const allowed = w.count < limit
    if (allowed) w.count++
    return {
      limit,
      remaining: limit - w.count,
      resetSeconds: Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000)),
      allowed,
    }
  }

  private sweep(now: number) {
    this.lastSweep = now
    for (const [id, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(id)
  }
}
