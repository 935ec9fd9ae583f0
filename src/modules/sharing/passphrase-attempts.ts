/**
 * Wrong passphrases counted per share link and per client address in fixed windows; past a limit the
 * page answers 429 with Retry-After until the window ends. Counted in this process's memory: a
 * passphrase is a second factor behind a 256-bit token nobody can guess, so the limit only has to make
 * guessing the passphrase of a leaked link slow, and each node of a cluster slowing it alike does that
 * (N nodes allow N times as many tries; docs/decisions.md "Share links"). Written here rather than
 * taken from a library: it is a map of counters, and the API's own limiter counts credentials' requests,
 * not failures.
 */
export class PassphraseAttempts {
  private readonly windows = new Map<string, { start: number; failures: number }>()

  constructor(private readonly limits: { perLink: number; perAddress: number; windowMs: number }) {}

  /** Seconds to wait before this link may be tried from this address again; 0 when it may be now. */
  waitSeconds(shareId: string, address: string, now: number): number {
    const waits = [this.wait(`link:${shareId}`, this.limits.perLink, now), this.wait(`ip:${address}`, this.limits.perAddress, now)]
    return Math.max(...waits)
  }

  /**
   * Counts a try against the link and the address before its passphrase is checked, so tries sent
   * together cannot all pass the limit while the (slow) hash checks run; a right one is taken back.
   */
  tried(shareId: string, address: string, now: number): void {
    for (const key of [`link:${shareId}`, `ip:${address}`]) this.current(key, now).failures++
    if (this.windows.size > 100_000) this.forgetEnded(now)
  }

  /** Takes back a try that turned out right. */
  succeeded(shareId: string, address: string, now: number): void {
    for (const key of [`link:${shareId}`, `ip:${address}`]) {
      const w = this.current(key, now)
      w.failures = Math.max(0, w.failures - 1)
    }
  }

  private wait(key: string, limit: number, now: number): number {
    const w = this.current(key, now)
    return w.failures >= limit ? Math.max(1, Math.ceil((w.start + this.limits.windowMs - now) / 1000)) : 0
  }

  private current(key: string, now: number): { start: number; failures: number } {
    let w = this.windows.get(key)
    if (!w || now >= w.start + this.limits.windowMs) {
      w = { start: now, failures: 0 }
      this.windows.set(key, w)
    }
    return w
  }

  private forgetEnded(now: number): void {
    for (const [key, w] of this.windows) if (now >= w.start + this.limits.windowMs) this.windows.delete(key)
  }
}
