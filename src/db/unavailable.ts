import { NoAnswerError } from './deadline'

/** `probe` settled within `timeoutMs`: true when it succeeded, false when the database is unavailable or slow. */
export async function answersWithin(probe: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<false>(resolve => { timer = setTimeout(() => resolve(false), timeoutMs) })
  try {
    return await Promise.race([probe().then(() => true), late])
  } catch (err) {
    if (asDatabaseUnavailable(err)) return false
    throw err
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The database cannot be reached, or cannot take a statement now: on PostgreSQL a connection refused,
 * lost or timed out, or a server shutting down, starting up or out of connections; on SQLite the
 * write lock still held by another process after the busy timeout (SQLITE_BUSY, "database is
 * locked"), a locked table, a disk I/O error, a full disk or a file it cannot open. Retrying later may
 * succeed, unlike any other failure of a statement. The stores throw it in place of the driver's
 * error (kept as `cause`); the HTTP layer answers it with 503 and `Retry-After: retryAfterSeconds`.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError'
  constructor(message: string, readonly retryAfterSeconds: number, options?: { cause?: unknown }) {
    super(message, options)
  }
}

/** SQLite's primary result codes (`errno & 0xff`) that mean "not now", and how long to wait. */
const SQLITE_UNAVAILABLE: Record<number, { what: string; retryAfterSeconds: number }> = {
  5: { what: 'the database is locked by another writer (SQLITE_BUSY after the busy timeout)', retryAfterSeconds: 1 },
  6: { what: 'a table is locked (SQLITE_LOCKED)', retryAfterSeconds: 1 },
  10: { what: 'a disk I/O error (SQLITE_IOERR)', retryAfterSeconds: 5 },
  13: { what: 'the disk is full (SQLITE_FULL)', retryAfterSeconds: 5 },
  14: { what: 'the database file cannot be opened (SQLITE_CANTOPEN)', retryAfterSeconds: 5 },
}

/** Bun.SQL's own codes for a connection that could not be made or was lost. */
const POSTGRES_CONNECTION_CODES = new Set([
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_FAILED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
  'ERR_POSTGRES_IDLE_TIMEOUT',
  'ERR_POSTGRES_LIFETIME_TIMEOUT',
])

/**
 * SQLSTATEs the server sends when it cannot serve now: class 08 (connection exception), 57P01–57P03
 * (terminated by an administrator, a crash, or not yet/no longer accepting connections), 57014 (a
 * statement cancelled, as statement_timeout does: see deadline.ts), 53300 (too many connections).
 */
const POSTGRES_UNAVAILABLE_STATE = /^(08...|57P0[123]|57014|53300)$/

/** Socket errors a driver may pass through as they are. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/**
 * The DatabaseUnavailableError a driver's error stands for (itself when it already is one), or null
 * when the error is anything else (a constraint, a syntax error, a bug), which stays as it was. Also
 * used by the HTTP layer for statements that reach bun:sqlite without going through a store.
 */
export function asDatabaseUnavailable(err: unknown): DatabaseUnavailableError | null {
  if (err instanceof DatabaseUnavailableError) return err
  if (err instanceof NoAnswerError) return new DatabaseUnavailableError(`${err.message} (NOTESVC_DATABASE_TIMEOUT_MS): it accepts connections but does not answer`, 5, { cause: err })
  if (typeof err !== 'object' || err === null) return null
  const e = err as { name?: unknown; code?: unknown; errno?: unknown; message?: unknown }
  const code = typeof e.code === 'string' ? e.code : ''
  if (e.name === 'SQLiteError' && typeof e.errno === 'number') {
    const known = SQLITE_UNAVAILABLE[e.errno & 0xff]
    return known ? new DatabaseUnavailableError(`SQLite: ${known.what}`, known.retryAfterSeconds, { cause: err }) : null
  }
  const unavailable =
    POSTGRES_CONNECTION_CODES.has(code) ||
    (code === 'ERR_POSTGRES_SERVER_ERROR' && typeof e.errno === 'string' && POSTGRES_UNAVAILABLE_STATE.test(e.errno)) ||
    NETWORK_CODES.has(code)
  return unavailable ? new DatabaseUnavailableError(`PostgreSQL: ${code}${typeof e.errno === 'string' ? ` (${e.errno})` : ''}: ${String(e.message ?? '')}`, 5, { cause: err }) : null
}

/** `err` as a DatabaseUnavailableError when it is one in disguise, else `err` itself: for `catch (e) { throw classified(e) }`. */
export function classified(err: unknown): unknown {
  return asDatabaseUnavailable(err) ?? err
}
