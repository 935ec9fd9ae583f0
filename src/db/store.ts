import { Database, type Statement } from 'bun:sqlite'

/**
 * One data-access interface, two back ends: bun:sqlite (embedded, the default) and PostgreSQL through
 * Bun's built-in SQL client (`Bun.SQL`). Repositories write one SQL text with `?` placeholders in the
 * dialect both share; the PostgreSQL store numbers them (`$1`, `$2`, …). Every call is asynchronous,
 * as a network database needs; the SQLite store answers at once.
 *
 * Why not a query builder: the queries of notesvc are few and hand-tuned (index names, row-value
 * seeks), both engines run them as written, and Bun ships both drivers, so a builder would add a
 * dependency and a layer without removing any SQL.
 */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array
export type Dialect = 'sqlite' | 'postgres'

export interface Queryable {
  readonly dialect: Dialect
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
  close(): Promise<void>
}

/** Opens the store a URL names: `postgres://…` / `postgresql://…`, otherwise a SQLite file path. */
export function openStore(target: string, options: { sqlite?: () => Database } = {}): Store {
  if (/^postgres(ql)?:\/\//.test(target)) return new PostgresStore(target)
  return new SqliteStore(options.sqlite ? options.sqlite() : new Database(target, { create: true, strict: true }))
}

const sqliteValue = (v: SqlValue) => (typeof v === 'boolean' ? (v ? 1 : 0) : v)

/**
 * SQLite: one connection, whose statements are prepared once. A transaction holds the connection:
 * statements from outside it (other requests, whose awaits may interleave with the transaction's
 * own) wait until it ends, so they neither see its uncommitted rows nor land inside it.
 */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const
  private statements = new Map<string, Statement>()
  private held: Promise<void> | null = null

  constructor(readonly db: Database) {}

  private statement(sql: string): Statement {
    let s = this.statements.get(sql)
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)))
    return s
  }

  private direct: Queryable = {
    dialect: 'sqlite',
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => this.statement(sql).all(...(params.map(sqliteValue) as never[])) as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => (this.statement(sql).get(...(params.map(sqliteValue) as never[])) as T | null) ?? null,
    run: async (sql: string, params: readonly SqlValue[] = []) => this.statement(sql).run(...(params.map(sqliteValue) as never[])).changes,
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
    while (this.held) await this.held // then run at once, before any transaction can begin
    return this.direct.all<T>(sql, params)
  }

  async get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null> {
    while (this.held) await this.held
    return this.direct.get<T>(sql, params)
  }

  async run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    while (this.held) await this.held
    return this.direct.run(sql, params)
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, mode: 'read' | 'write' = 'write'): Promise<T> {
    const release = await this.acquire()
    let open = true
    const guard = <F extends (...a: never[]) => Promise<unknown>>(f: F): F =>
      ((...a: never[]) => {
        if (!open) return Promise.reject(new Error('a transaction handle was used after its transaction ended'))
        return f(...a)
      }) as F
    const tx: Queryable = { dialect: 'sqlite', all: guard(this.direct.all), get: guard(this.direct.get), run: guard(this.direct.run) }
    try {
      this.statement(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN').run()
      try {
        const result = await fn(tx)
        this.statement('COMMIT').run()
        return result
      } catch (err) {
        if (this.db.inTransaction) this.statement('ROLLBACK').run()
        throw err
      }
    } finally {
      open = false
      release()
    }
  }

  async close(): Promise<void> {
    await this.acquire()
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

/** PostgreSQL through Bun.SQL's connection pool; each transaction on a connection of its own. */
export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const
  readonly sql: InstanceType<typeof Bun.SQL>
  private texts = new Map<string, string>()

  constructor(url: string, options: { max?: number } = {}) {
    this.sql = new Bun.SQL(url, { max: options.max ?? 10 })
  }

  private text(sql: string): string {
    let t = this.texts.get(sql)
    if (t === undefined) this.texts.set(sql, (t = numberPlaceholders(sql)))
    return t
  }

  private over(client: InstanceType<typeof Bun.SQL>): Queryable {
    return {
      dialect: 'postgres',
      all: async <T>(sql: string, params: readonly SqlValue[] = []) => [...(await client.unsafe(this.text(sql), params as SqlValue[]))] as T[],
      get: async <T>(sql: string, params: readonly SqlValue[] = []) => ((await client.unsafe(this.text(sql), params as SqlValue[]))[0] as T | undefined) ?? null,
      run: async (sql: string, params: readonly SqlValue[] = []) => {
        const result = await client.unsafe(this.text(sql), params as SqlValue[])
        return Number((result as unknown as { count?: number }).count ?? 0)
      },
    }
  }

  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.over(this.sql).all<T>(sql, params)
  }

  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | null> {
    return this.over(this.sql).get<T>(sql, params)
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.over(this.sql).run(sql, params)
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return (await this.sql.begin(async tx => fn(this.over(tx as unknown as InstanceType<typeof Bun.SQL>)))) as T
  }

  async close(): Promise<void> {
    await this.sql.close()
  }
}
