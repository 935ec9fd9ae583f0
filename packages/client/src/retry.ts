/**
 * When to try a refused request again: on 429 and 503 (refused before any work was done, so safe for
 * every method), after the server's `Retry-After` when it gives one, else after an exponential backoff
 * with jitter.
 */
export interface RetryOptions {
  /** tries after the first (default 2) */
  maxRetries?: number
  /** statuses retried (default 429 and 503) */
  on?: readonly number[]
  /** the first backoff when the server gives no Retry-After (default 500 ms), doubled each try */
  baseDelayMs?: number
  /** the longest wait (default 30 s): a Retry-After beyond it is not waited for, the error is thrown */
  maxDelayMs?: number
}

/** How the client waits between tries; tests pass their own to see the delays without waiting. */
export type Sleep = (ms: number) => Promise<void>

export const defaultSleep: Sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

export type RetryPolicy = Required<RetryOptions>

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy | null {
  if (options === false) return null
  return { maxRetries: 2, on: [429, 503], baseDelayMs: 500, maxDelayMs: 30_000, ...options }
}

/** Retry-After in seconds: a number of seconds, or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null
  if (/^\d+$/.test(header.trim())) return Number(header.trim())
  const at = Date.parse(header)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000))
}

/**
 * The wait before try `retry` (0 for the first retry) after an answer of `status`, or null when it
 * is not retried (not a retried status, no tries left, or a Retry-After longer than maxDelayMs).
 */
export function retryDelay(policy: RetryPolicy | null, retry: number, status: number, retryAfter: number | null, random = Math.random): number | null {
  if (!policy || retry >= policy.maxRetries || !policy.on.includes(status)) return null
  if (retryAfter !== null) {
    const ms = retryAfter * 1000
    return ms <= policy.maxDelayMs ? ms : null
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry)
  return Math.round(backoff / 2 + (random() * backoff) / 2)
}
