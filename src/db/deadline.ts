/**
 * How long PostgreSQL may take to answer (NOTESVC_DATABASE_TIMEOUT_MS), for a server that hangs
 * rather than refuses: stopped by a debugger or SIGSTOP, swapping, behind a network that drops
 * packets. Such a server keeps its connections open and the kernel still accepts new ones, so without
 * a limit every statement waits for it, and every request with it.
 *
 * Two limits, so that the server's own cancel comes first whenever it can: the server is told to stop
 * a statement after `statementMs` (`statement_timeout`, sent when each connection opens; it counts lock
 * waits too), which leaves the connection usable; the client gives up `graceMs` later, when only a
 * server that answers nothing at all is still silent, and then closes the connections that wait for it.
 */
/** NOTESVC_DATABASE_TIMEOUT_MS's default: a hung server is answered 503 within about 6 seconds. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 5000

export interface DatabaseDeadline {
  /** the server's limit for one statement (statement_timeout), and how long a new connection may take to open */
  statementMs: number
  /** how long the client waits for an answer before it gives up on the connection */
  answerMs: number
}

/** The deadline of NOTESVC_DATABASE_TIMEOUT_MS, or null for none (0). */
export function databaseDeadline(timeoutMs: number): DatabaseDeadline | null {
  if (!(timeoutMs > 0)) return null
  return { statementMs: timeoutMs, answerMs: timeoutMs + Math.min(1000, timeoutMs) }
}

/** Bun.SQL's options for a deadline: the connection's own timeout, and the server's statement_timeout. */
export function deadlineOptions(deadline: DatabaseDeadline | null): { connectionTimeout?: number; connection?: Record<string, number> } {
  if (!deadline) return {}
  return { connectionTimeout: Math.max(1, Math.ceil(deadline.statementMs / 1000)), connection: { statement_timeout: deadline.statementMs } }
}

/** No answer within the deadline: the work was given up (its connection closed, or the query cancelled before it was sent). */
export class NoAnswerError extends Error {
  override readonly name = 'NoAnswerError'
}

/**
 * `work`'s result, or NoAnswerError when it has not settled `ms` after the call, once `onLate` has run
 * (which closes or cancels what waits). `work` keeps a handler, so its own late failure is no
 * unhandled rejection.
 */
export async function answeredWithin<T>(work: PromiseLike<T>, ms: number, what: string, onLate: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onLate()
      reject(new NoAnswerError(`PostgreSQL did not answer ${what} within ${ms} ms`))
    }, ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/** A timer that calls `onLate` unless stopped within `ms`: for the steps of a transaction no statement of ours covers (BEGIN, COMMIT). */
export function watchdog(ms: number, onLate: () => void): () => void {
  const timer = setTimeout(onLate, ms)
  return () => clearTimeout(timer)
}
