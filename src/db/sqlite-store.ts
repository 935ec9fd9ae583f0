import { Database, type Statement } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { SQLITE_DIALECT } from './dialect'
import { changeStamp } from './read-cache'
import { answersWithin, classified } from './unavailable'
import type { Queryable, SqlValue, StoreActivity, StoreCommon } from './queryable'

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
export class SqliteStore implements StoreCommon {
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
