import type { Config } from '../config'
import { openDatabase } from './database'
import { migrateStore } from './migrate-store'
import { POSTGRES_MIGRATIONS } from './migrations-postgres'
import { PostgresStore, SqliteStore, type Store } from './store'

/**
 * The store the configuration names, with its schema brought up to date: PostgreSQL when
 * `NOTESVC_DATABASE_URL` is set (migrations under an advisory lock, so nodes that start together
 * migrate once), else the embedded SQLite file in the data folder.
 */
export async function openConfiguredStore(config: Pick<Config, 'databaseUrl' | 'databasePath'>, options: { poolSize?: number } = {}): Promise<Store> {
  if (config.databaseUrl) {
    const store = new PostgresStore(config.databaseUrl, { max: options.poolSize ?? 10 })
    try {
      await migrateStore(store, POSTGRES_MIGRATIONS)
    } catch (err) {
      await store.close().catch(() => {})
      throw err
    }
    return store
  }
  return new SqliteStore(openDatabase(config.databasePath))
}

/** A private in-memory SQLite store (tests). */
export function memoryStore(): SqliteStore {
  return new SqliteStore(openDatabase(':memory:'))
}
