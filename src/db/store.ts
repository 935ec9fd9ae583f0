import { Database } from 'bun:sqlite'
import type { StoreCommon } from './queryable'
import { SqliteStore } from './sqlite-store'
import { PostgresStore } from './postgres-store'

export { SqliteStore, ReadThreadUnavailableError, type ReadThread } from './sqlite-store'
export { PostgresStore, numberPlaceholders } from './postgres-store'
export { DatabaseUnavailableError, asDatabaseUnavailable } from './unavailable'
export type { Queryable, SqlValue } from './queryable'

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
export interface Store extends StoreCommon {
  /**
   * The one place a back end is chosen: calls the function for this store's back end with the store
   * as its own type. Only the composition root calls it, to pick per-back-end repository files.
   */
  choose<T>(choices: { sqlite: (store: SqliteStore) => T; postgres: (store: PostgresStore) => T }): T
}

/** Opens the store a URL names: `postgres://…` / `postgresql://…`, otherwise a SQLite file path. */
export function openStore(target: string, options: { sqlite?: () => Database } = {}): Store {
  if (/^postgres(ql)?:\/\//.test(target)) return new PostgresStore(target)
  return new SqliteStore(options.sqlite ? options.sqlite() : new Database(target, { create: true, strict: true }))
}
