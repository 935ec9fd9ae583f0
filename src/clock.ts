export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock tests can move by hand. */
export function fixedClock(start: Date | string): Clock & { advance(ms: number): void; set(t: Date | string): void } {
  let t = new Date(start).getTime()
  return {
    now: () => new Date(t),
    advance(ms) { t += ms },
    set(v) { t = new Date(v).getTime() },
  }
}
