import { migrate, newerSchemaError } from './database'
import { PostgresStore, SqliteStore, type Store } from './store'

export interface Migration {
  version: number
  name: string
  sql: string
}

/**
 * The key of the PostgreSQL advisory lock migrations run under: any fixed 64-bit number, the same in
 * every notesvc build ("notesvc1" in ASCII).
 */
const MIGRATION_LOCK_KEY = '7957707045664613169'

/**
 * Brings a store's schema up to date: creates `schema_migrations` if absent, then applies every
 * migration newer than the database's version, in order, each in one transaction with its row in
 * `schema_migrations`. Returns how many it applied. A database at a version newer than any of
 * `migrations` is refused.
 *
 * On PostgreSQL each step takes `pg_advisory_xact_lock` first and reads the version after it, so
 * nodes that start together take turns: the first applies a version, the others then find it
 * applied, and every version is applied once. The lock is released by the step's commit or rollback,
 * so a node that dies mid-migration leaves nothing held and nothing half-applied. SQLite has one
 * writer at a time already and uses the runner of `database.ts`.
 */
export async function migrateStore(store: Store, migrations: readonly Migration[]): Promise<number> {
  if (store instanceof SqliteStore) return migrate(store.db, [...migrations])
  if (!(store instanceof PostgresStore)) throw new Error(`cannot migrate a ${store.sql.name} store that is neither SqliteStore nor PostgresStore`)
  const ordered = [...migrations].sort((a, b) => a.version - b.version)
  const latest = ordered.at(-1)?.version ?? 0
  let applied = 0
  for (;;) {
    // Statements without parameters go through the simple query protocol: a migration may hold many.
    const step = await store.client.begin(async tx => {
      // a migration may take longer than a request's statement may (NOTESVC_DATABASE_TIMEOUT_MS)
      await tx.unsafe('SET LOCAL statement_timeout = 0')
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`)
      await tx.unsafe('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)')
      const [row] = await tx.unsafe('SELECT max(version) AS v FROM schema_migrations')
      const current = Number((row as { v: number | null } | undefined)?.v ?? 0)
      if (current > latest) throw newerSchemaError(current, latest)
      const next = ordered.find(m => m.version > current)
      if (!next) return null
      await tx.unsafe(next.sql)
      await tx.unsafe('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [next.version, next.name, new Date().toISOString()])
      return next
    })
    if (!step) return applied
    applied++
  }
}

/** The schema version of a store: the highest migration applied, or 0 before the first. */
export async function storeSchemaVersion(store: Store): Promise<number> {
  const row = await store.get<{ v: number | string | null }>('SELECT max(version) AS v FROM schema_migrations')
  return Number(row?.v ?? 0)
}
