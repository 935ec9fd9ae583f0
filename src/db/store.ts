import { Database, type Statement } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { POSTGRES_DIALECT, SQLITE_DIALECT, type Dialect } from './dialect'
import { changeStamp } from './read-cache'
import { answeredWithin, databaseDeadline, deadlineOptions, NoAnswerError, watchdog, type DatabaseDeadline } from './deadline'

export type { Dialect }

/**
 * One data-access interface, two back ends: bun:sqlite (embedded, the default) and PostgreSQL through
 * Bun's built-in SQL client (`Bun.SQL`). Repositories write one SQL text with `?` placeholders in the
 * dialect both share; the PostgreSQL store numbers them (`$1`, `$2`, …). Every call is asynchronous,
 * as a network database needs; the SQLite store answers at once.
 *
 * Ambient transactions: inside `store.transaction(fn)`, every statement of that store, whether sent
 * through the handle `fn` is given or through the store itself (a repository called by a service
 * called inside the transaction), runs in that transaction, and a nested `transaction()` joins it
 * rather than opening another. The open transaction is carried by AsyncLocalStorage, so services
 * compose (charge credits and queue a job in one transaction) without passing a handle down every
 * call, the way Sequelize's CLS transactions and Drizzle/Kysely users' AsyncLocalStorage wrappers do.
 *
 * Why not a query builder: the queries of notesvc are few and hand-tuned (index names, row-value
 * seeks), both engines run them as written, and Bun ships both drivers, so a builder would add a
 * dependency and a layer without removing any SQL.
 *
 * Everything that differs between the back ends is here and in `dialect.ts`: the few pieces of SQL
 * each spells its own way (`store.sql`), what each can do (notifications, a shared clock, a change
 * counter), and `choose`, through which the composition root picks the per-back-end repository files.
 */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array

export interface Queryable {
  /** every row */
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>
  /** the first row, or null */
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null>
  /** a statement that returns no rows: the number of rows it changed */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>
}

export interface Store extends Queryable {
  /**
   * Runs `fn` in one transaction, its statements through the handle it is given; commits when it
   * returns, rolls back when it throws. `write` takes the write lock at once (SQLite's BEGIN
   * IMMEDIATE), so a read-then-write cannot fail halfway on a busy database.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, mode?: 'read' | 'write'): Promise<T>
  /** whether the calling async context is inside a transaction of this store */
  readonly inTransaction: boolean
  /** how this back end spells what differs, and what it can do */
  readonly sql: Dialect
  /**
   * The one place a back end is chosen: calls the function for this store's back end with the store
   * as its own type. Only the composition root calls it, to pick per-back-end repository files.
   */
  choose<T>(choices: { sqlite: (store: SqliteStore) => T; postgres: (store: PostgresStore) => T }): T
  /**
   * Announces `payload` on `channel` to every listening connection when the calling transaction
   * commits (never if it rolls back); nothing where the dialect does not notify (`sql.notifies`).
   */
  notify(channel: string, payload: string): Promise<void>
  /**
   * Calls `onNotice` for every notice on `channel` (after its commit) and `onListen` once listening
   * (again after a reconnect, when notices may have been missed). Resolves to the function that stops
   * listening, or null where the dialect does not notify: watch `changeCounter` instead.
   */
  listen(channel: string, onNotice: () => void, onListen: () => void): Promise<(() => Promise<void>) | null>
  /** A number that moves when another connection commits (SQLite's data_version); constant where notices exist. */
  changeCounter(): Promise<number>
  /**
   * How far the database's clock is ahead of `localMs` (negative: behind), in ms, and the round trip
   * it was measured over (the offset is right to within half of it): of three measures, the one with
   * the shortest round trip. 0 where the database's clock is this machine's (`sql.remoteClock` false).
   */
  clockOffset(localMs: () => number): Promise<{ offsetMs: number; roundTripMs: number }>
  /**
   * A stamp for results read from this store and kept in memory (ReadCache): it moves whenever the
   * database may have changed, as far as this process can tell. SQLite: any write of this connection,
   * or a commit of another (data_version). PostgreSQL, where other nodes' writes cannot be seen: every
   * `maxAgeMs`, so nothing is trusted for longer.
   */
  readStamp(maxAgeMs: number): () => string
  /**
   * Whether the database answers a statement now: false when it throws DatabaseUnavailableError or
   * takes longer than `timeoutMs` (a server that hangs rather than refuses). For health.
   */
  reachable(timeoutMs: number): Promise<boolean>
  /** What the connections of this store are doing now, for the metrics (GET /metrics). */
  activity(): StoreActivity
  close(): Promise<void>
}

/** The connections of a store now: how many it may hold, transactions holding one, statements awaiting their answer. */
export interface StoreActivity {
  maxConnections: number
  openTransactions: number
  queriesInFlight: number
}

/** `probe` settled within `timeoutMs`: true when it succeeded, false when the database is unavailable or slow. */
async function answersWithin(probe: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
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

/** Opens the store a URL names: `postgres://…` / `postgresql://…`, otherwise a SQLite file path. */
export function openStore(target: string, options: { sqlite?: () => Database } = {}): Store {
  if (/^postgres(ql)?:\/\//.test(target)) return new PostgresStore(target)
  return new SqliteStore(options.sqlite ? options.sqlite() : new Database(target, { create: true, strict: true }))
}

const sqliteValue = (v: SqlValue) => (typeof v === 'boolean' ? (v ? 1 : 0) : v)

/** Reads run on a connection of their own in another thread (db/read-worker.ts). */
export interface ReadThread {
  all<T>(sql: string, params: readonly unknown[]): Promise<T[]>
  /** reads sent to the thread and not yet answered */
  readonly inFlight: number
  /** whether the thread's connection was opened (it starts with the first read) */
  readonly started: boolean
  close(): void
}

/** The read thread could not run (it did not start, or died): the read is made on the connection itself. */
export class ReadThreadUnavailableError extends Error {}

/**
 * SQLite: one connection, whose statements are prepared once. A transaction holds the connection:
 * statements from outside it (other requests, whose awaits may interleave with the transaction's
 * own) wait until it ends, so they neither see its uncommitted rows nor land inside it.
 */
export class SqliteStore implements Store {
  readonly sql = SQLITE_DIALECT
  private statements = new Map<string, Statement>()
  private held: Promise<void> | null = null
  /** the transaction the current async context runs in, if any */
  private ambient = new AsyncLocalStorage<Queryable>()

  /** the thread long reads run on (`allAside`), when the database is a file */
  private readThread: ReadThread | null = null

  constructor(readonly db: Database) {}

  /** Runs `allAside` reads on `thread` from now on; it is closed with the store. */
  useReadThread(thread: ReadThread): void {
    this.readThread = thread
  }

  /**
   * A read whose cost grows with what the rows hold (a search): on the read thread when there is one
   * and this is not inside a transaction (whose own writes only this connection sees), else here.
   */
  allAside<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    const thread = this.readThread
    if (!thread || this.inTransaction) return this.all<T>(sql, params)
    return thread.all<T>(sql, params.map(sqliteValue)).catch(err => {
      if (!(err instanceof ReadThreadUnavailableError)) throw err
      if (this.readThread === thread) this.readThread = null // from now on, here
      return this.all<T>(sql, params)
    })
  }

  private statement(sql: string): Statement {
    let s = this.statements.get(sql)
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)))
    return s
  }

  // a busy, locked or failing database is thrown as DatabaseUnavailableError (classified), here and in transaction()
  private direct: Queryable = {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => {
      try {
        return this.statement(sql).all(...(params.map(sqliteValue) as never[])) as T[]
      } catch (err) {
        throw classified(err)
      }
    },
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => {
      try {
        return (this.statement(sql).get(...(params.map(sqliteValue) as never[])) as T | null) ?? null
      } catch (err) {
        throw classified(err)
      }
    },
    run: async (sql: string, params: readonly SqlValue[] = []) => {
      try {
        return this.statement(sql).run(...(params.map(sqliteValue) as never[])).changes
      } catch (err) {
        throw classified(err)
      }
    },
  }

  /**
   * Waits until no transaction holds the connection, then takes it, in the same step: of several
   * waiters woken together, the first takes it and the others wait again.
   */
  private async acquire(): Promise<() => void> {
    while (this.held) await this.held
    let release!: () => void
    this.held = new Promise<void>(resolve => (release = resolve))
    return () => {
      this.held = null
      release()
    }
  }

  async all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    const tx = this.ambient.getStore()
    if (tx) return tx.all<T>(sql, params)
    while (this.held) await this.held // then run at once, before any transaction can begin
    return this.direct.all<T>(sql, params)
  }

  async get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null> {
    const tx = this.ambient.getStore()
    if (tx) return tx.get<T>(sql, params)
    while (this.held) await this.held
    return this.direct.get<T>(sql, params)
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    const tx = this.ambient.getStore()
    if (tx) return tx.run(sql, params)
    while (this.held) await this.held
    return this.direct.run(sql, params)
  }

  /** Whether the calling async context is inside a transaction of this store. */
  get inTransaction(): boolean {
    return this.ambient.getStore() !== undefined
  }

  /**
   * Whether a statement from the calling context would run at once: no transaction holds the
   * connection (nor is closing it) and the caller is not inside one.
   */
  get free(): boolean {
    return this.held === null && this.ambient.getStore() === undefined
  }

  /**
   * `get` answered synchronously when it would run at once (the connection `free`); undefined when it
   * is not: then `get` waits for it. For hot paths that should not pay for a turn through promises
   * when nothing waits.
   */
  getNow<T>(sql: string, params: readonly SqlValue[] = []): T | null | undefined {
    if (!this.free) return undefined
    try {
      return (this.statement(sql).get(...(params.map(sqliteValue) as never[])) as T | null) ?? null
    } catch (err) {
      throw classified(err)
    }
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, mode: 'read' | 'write' = 'write'): Promise<T> {
    const joined = this.ambient.getStore()
    if (joined) return fn(joined)
    const release = await this.acquire()
    let open = true
    const guard = <F extends (...a: never[]) => Promise<unknown>>(f: F): F =>
      ((...a: never[]) => {
        if (!open) return Promise.reject(new Error('a transaction handle was used after its transaction ended'))
        return f(...a)
      }) as F
    const tx: Queryable = { all: guard(this.direct.all), get: guard(this.direct.get), run: guard(this.direct.run) }
    try {
      this.statement(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN').run()
      try {
        const result = await this.ambient.run(tx, () => fn(tx))
        this.statement('COMMIT').run()
        return result
      } catch (err) {
        if (this.db.inTransaction) this.statement('ROLLBACK').run()
        throw err
      }
    } catch (err) {
      // BEGIN IMMEDIATE still busy after the busy timeout, a COMMIT that failed, a statement of fn
      throw classified(err)
    } finally {
      open = false
      release()
    }
  }

  choose<T>(choices: { sqlite: (store: SqliteStore) => T }): T {
    return choices.sqlite(this)
  }

  /**
   * The one connection (a transaction holds it, or none does; its statements are answered within the
   * call, so none is ever in flight when asked), and the read thread's, once started, with the reads
   * it has not answered yet.
   */
  activity(): StoreActivity {
    const thread = this.readThread
    return { maxConnections: thread?.started ? 2 : 1, openTransactions: this.held ? 1 : 0, queriesInFlight: thread?.inFlight ?? 0 }
  }

  async notify(): Promise<void> {}

  async listen(): Promise<null> {
    return null
  }

  async changeCounter(): Promise<number> {
    return Number((await this.get<{ data_version: number }>('PRAGMA data_version'))!.data_version)
  }

  async clockOffset(): Promise<{ offsetMs: number; roundTripMs: number }> {
    return { offsetMs: 0, roundTripMs: 0 }
  }

  readStamp(): () => string {
    return changeStamp(this.db)
  }

  /** The schema version, read from the file's header: the file must be readable, and not locked for recovery. */
  reachable(timeoutMs: number): Promise<boolean> {
    return answersWithin(() => this.get('PRAGMA schema_version'), timeoutMs)
  }

  async close(): Promise<void> {
    await this.acquire()
    this.readThread?.close()
    this.db.close()
  }
}

/**
 * `?` placeholders as PostgreSQL's `$1`, `$2`, …, leaving question marks inside string literals,
 * quoted identifiers and comments alone.
 */
export function numberPlaceholders(sql: string): string {
  let out = ''
  let n = 0
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1)
      const stop = end === -1 ? sql.length : end + 1
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      const stop = end === -1 ? sql.length : end
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '?') out += `$${++n}`
    else out += c
  }
  return out
}

/**
 * PostgreSQL through Bun.SQL's connection pool; each transaction on a connection of its own. With a
 * deadline (`timeoutMs`, NOTESVC_DATABASE_TIMEOUT_MS; deadline.ts) no statement waits longer for the
 * server: one sent and unanswered past it means the server hangs, and the pool is replaced by a new
 * one (the old one's connections closed); a transaction's connection is closed instead. Either way
 * the caller gets DatabaseUnavailableError (503), and the next statement opens a new connection,
 * which works again as soon as the server answers.
 */
export class PostgresStore implements Store {
  readonly sql = POSTGRES_DIALECT
  private texts = new Map<string, string>()
  private ambient = new AsyncLocalStorage<Queryable>()
  private pooled: InstanceType<typeof Bun.SQL>
  private pool: Queryable
  /** LISTEN's own connection, opened by the first listen(): it outlives pools given up on */
  private listener: InstanceType<typeof Bun.SQL> | null = null
  private readonly maxConnections: number
  private readonly deadline: DatabaseDeadline | null
  /** queries sent and not yet answered, and transactions begun and not yet ended (activity) */
  private inFlight = 0
  private transactions = 0

  constructor(private readonly url: string, options: { max?: number; timeoutMs?: number } = {}) {
    this.maxConnections = options.max ?? 10
    this.deadline = databaseDeadline(options.timeoutMs ?? 0)
    this.pooled = this.newPool()
    this.pool = this.over(this.pooled)
  }

  /** the Bun.SQL connection pool (a new one after the server stopped answering) */
  get client(): InstanceType<typeof Bun.SQL> {
    return this.pooled
  }

  private newPool(max = this.maxConnections): InstanceType<typeof Bun.SQL> {
    return new Bun.SQL(this.url, { max, ...deadlineOptions(this.deadline) })
  }

  /** The server did not answer a statement sent on `stale`: its connections are closed, and a new pool takes its place. */
  private replacePool(stale: InstanceType<typeof Bun.SQL>): void {
    if (this.pooled !== stale) return
    this.pooled = this.newPool()
    this.pool = this.over(this.pooled)
    void stale.close({ timeout: 0 }).catch(() => {})
  }

  /** The pool's size, the transactions holding one of its connections, the queries awaiting their answer. */
  activity(): StoreActivity {
    return { maxConnections: this.maxConnections, openTransactions: this.transactions, queriesInFlight: this.inFlight }
  }

  private text(sql: string): string {
    let t = this.texts.get(sql)
    if (t === undefined) this.texts.set(sql, (t = numberPlaceholders(sql)))
    return t
  }

  /**
   * Statements on `client`; a connection refused, lost or timed out is thrown as
   * DatabaseUnavailableError (classified), here and in transaction(). Past the deadline, `giveUp`
   * runs (a transaction closes its connection); on the pool, a statement still waiting for a
   * connection is cancelled (it never runs), and one sent gives up on the pool.
   */
  private over(client: InstanceType<typeof Bun.SQL>, giveUp?: () => void): Queryable {
    const query = async (sql: string, params: readonly SqlValue[]) => {
      this.inFlight++
      try {
        const q = client.unsafe(this.text(sql), params as SqlValue[])
        if (!this.deadline) return await q
        return await answeredWithin(q, this.deadline.answerMs, 'a statement', giveUp ?? (() => (q.active ? this.replacePool(client) : q.cancel())))
      } catch (err) {
        throw classified(err)
      } finally {
        this.inFlight--
      }
    }
    return {
      all: async <T>(sql: string, params: readonly SqlValue[] = []) => [...(await query(sql, params))] as T[],
      get: async <T>(sql: string, params: readonly SqlValue[] = []) => ((await query(sql, params))[0] as T | undefined) ?? null,
      run: async (sql: string, params: readonly SqlValue[] = []) => {
        const result = await query(sql, params)
        return Number((result as unknown as { count?: number }).count ?? 0)
      },
    }
  }

  private current(): Queryable {
    return this.ambient.getStore() ?? this.pool
  }

  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.current().all<T>(sql, params)
  }

  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null> {
    return this.current().get<T>(sql, params)
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.current().run(sql, params)
  }

  /** Whether the calling async context is inside a transaction of this store. */
  get inTransaction(): boolean {
    return this.ambient.getStore() !== undefined
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const joined = this.ambient.getStore()
    if (joined) return fn(joined)
    this.transactions++
    try {
      if (this.deadline) return await this.boundedTransaction(fn, this.deadline)
      return (await this.pooled.begin(async tx => {
        const q = this.over(tx as unknown as InstanceType<typeof Bun.SQL>)
        return this.ambient.run(q, () => fn(q))
      })) as T
    } catch (err) {
      // no connection for BEGIN, or the connection lost before COMMIT was answered
      throw classified(err)
    } finally {
      this.transactions--
    }
  }

  /**
   * A transaction on a connection reserved within the deadline, closed when the server leaves BEGIN,
   * a statement, COMMIT or ROLLBACK unanswered past it (the server rolls back what the connection
   * began); the time `fn` spends on anything else is its own.
   */
  private async boundedTransaction<T>(fn: (tx: Queryable) => Promise<T>, deadline: DatabaseDeadline): Promise<T> {
    const conn = await this.pooled.reserve({ signal: AbortSignal.timeout(deadline.answerMs) }).catch((err: unknown) => {
      throw (err as Error)?.name === 'TimeoutError' ? new NoAnswerError(`PostgreSQL gave no connection within ${deadline.answerMs} ms`) : err
    })
    let gaveUp = false
    const giveUp = () => {
      gaveUp = true
      void conn.close().catch(() => {})
    }
    let stop = watchdog(deadline.answerMs, giveUp) // BEGIN
    try {
      return (await conn.begin(async tx => {
        stop()
        const q = this.over(tx as unknown as InstanceType<typeof Bun.SQL>, giveUp)
        try {
          return await this.ambient.run(q, () => fn(q))
        } finally {
          stop = watchdog(deadline.answerMs, giveUp) // COMMIT or ROLLBACK
        }
      })) as T
    } catch (err) {
      throw gaveUp && !(err instanceof NoAnswerError) ? new NoAnswerError(`PostgreSQL did not answer a transaction's step within ${deadline.answerMs} ms`, { cause: err }) : err
    } finally {
      stop()
      if (!gaveUp) void conn.release()
    }
  }

  choose<T>(choices: { postgres: (store: PostgresStore) => T }): T {
    return choices.postgres(this)
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.get('SELECT pg_notify(?, ?)', [channel, payload])
  }

  async listen(channel: string, onNotice: () => void, onListen: () => void): Promise<() => Promise<void>> {
    this.listener ??= this.newPool(1)
    const subscription = await this.listener.listen(channel, () => onNotice(), onListen)
    return () => subscription.unlisten()
  }

  async changeCounter(): Promise<number> {
    return 0
  }

  async clockOffset(localMs: () => number): Promise<{ offsetMs: number; roundTripMs: number }> {
    let best = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY }
    for (let i = 0; i < 3; i++) {
      const before = localMs()
      const row = (await this.get<{ ms: number | string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms'))!
      const after = localMs()
      if (after - before < best.roundTripMs) best = { offsetMs: Math.round(Number(row.ms) - (before + after) / 2), roundTripMs: after - before }
    }
    return best
  }

  readStamp(maxAgeMs: number): () => string {
    return () => String(Math.floor(Date.now() / maxAgeMs))
  }

  /** One round trip on a pooled connection (a new one when the pool lost them all). */
  reachable(timeoutMs: number): Promise<boolean> {
    return answersWithin(() => this.get('SELECT 1'), timeoutMs)
  }

  async close(): Promise<void> {
    await Promise.all([this.pooled.close(), this.listener?.close()])
  }
}
