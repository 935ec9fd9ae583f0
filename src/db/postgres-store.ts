import { AsyncLocalStorage } from 'node:async_hooks'
import { POSTGRES_DIALECT } from './dialect'
import { answeredWithin, databaseDeadline, deadlineOptions, NoAnswerError, watchdog, type DatabaseDeadline } from './deadline'
import { answersWithin, classified } from './unavailable'
import type { Queryable, SqlValue, StoreActivity, StoreCommon } from './queryable'

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
export class PostgresStore implements StoreCommon {
  readonly sql = POSTGRES_DIALECT
  private texts = new Map<string, string>()
  private ambient = new AsyncLocalStorage<Queryable>()
  private pooled: InstanceType<typeof Bun.SQL>
  private pool: Queryable
  /** connections whose every statement is planned for its own values (customPlanned), opened on first use */
  private planning: { client: InstanceType<typeof Bun.SQL>; q: Queryable } | null = null
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

  private newPool(max = this.maxConnections, settings: Record<string, string | number> = {}): InstanceType<typeof Bun.SQL> {
    const options = deadlineOptions(this.deadline)
    return new Bun.SQL(this.url, { max, ...options, connection: { ...options.connection, ...settings } })
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
   * connection is cancelled (it never runs), and one sent gives up on the pool (`replace`: by default
   * the main pool's replacement; customPlanned's connections are closed and opened again on next use).
   */
  private over(client: InstanceType<typeof Bun.SQL>, giveUp?: () => void, replace = () => this.replacePool(client)): Queryable {
    const query = async (sql: string, params: readonly SqlValue[]) => {
      this.inFlight++
      try {
        const q = client.unsafe(this.text(sql), params as SqlValue[])
        if (!this.deadline) return await q
        return await answeredWithin(q, this.deadline.answerMs, 'a statement', giveUp ?? (() => (q.active ? replace() : q.cancel())))
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

  /**
   * `fn`'s statements planned for the values they are given every time, as a search's must be: a
   * statement prepared once per connection would after five runs get a generic plan, made without
   * knowing how many notes hold the words (for a common word the wrong scan). Outside a transaction,
   * on connections of their own whose plan_cache_mode is force_custom_plan (at most half the pool's
   * size, opened on first use), one statement at a time and no transaction around it; inside one, on
   * its connection after SET LOCAL, which holds until it ends.
   */
  async customPlanned<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.inTransaction) {
      return this.transaction(async tx => {
        await tx.run('SET LOCAL plan_cache_mode = force_custom_plan')
        return fn(tx)
      })
    }
    if (!this.planning) {
      const client = this.newPool(Math.max(1, Math.ceil(this.maxConnections / 2)), { plan_cache_mode: 'force_custom_plan' })
      // a statement sent and unanswered past the deadline: these connections are closed, and the
      // next call opens new ones (one still waiting for a connection is cancelled, as on the pool)
      const q = this.over(client, undefined, () => {
        if (this.planning?.client === client) this.planning = null
        void client.close({ timeout: 0 }).catch(() => {})
      })
      this.planning = { client, q }
    }
    return fn(this.planning.q)
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
    await Promise.all([this.pooled.close(), this.listener?.close(), this.planning?.client.close()])
  }
}
