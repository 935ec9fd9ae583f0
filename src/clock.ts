export interface Clock {
  now(): Date
  /** `now().getTime()` without making a Date (the hot path of a request reads the time twice) */
  millis?(): number
}

export const systemClock: Clock = { now: () => new Date(), millis: Date.now }

/** The clock's time in milliseconds since the epoch, without a Date where the clock can tell it so. */
export const millisNow = (clock: Clock): number => (clock.millis ? clock.millis() : clock.now().getTime())

/** A clock tests can move by hand. */
export function fixedClock(start: Date | string): Clock & { advance(ms: number): void; set(t: Date | string): void } {
  let t = new Date(start).getTime()
  return {
    now: () => new Date(t),
    millis: () => t,
    advance(ms) { t += ms },
    set(v) { t = new Date(v).getTime() },
  }
}
