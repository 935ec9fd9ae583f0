import type { Config } from '../config'
import { openDatabase } from './database'
import { ReadWorker } from './read-worker'
import { migrateStore } from './migrate-store'
import { postgresMigrations } from './migrations-postgres'
import { PostgresStore, SqliteStore, type Store } from './store'
import { DEFAULT_DATABASE_TIMEOUT_MS } from './deadline'

/**
 * The store the configuration names, with its schema brought up to date: PostgreSQL when
 * `NOTESVC_DATABASE_URL` is set (migrations under an advisory lock, so nodes that start together
 * migrate once), else the embedded SQLite file in the data folder.
 */
export async function openConfiguredStore(config: Pick<Config, 'databaseUrl' | 'databasePath'> & Partial<Pick<Config, 'databaseTimeoutMs'>>, options: { poolSize?: number; readThread?: boolean } = {}): Promise<Store> {
  if (config.databaseUrl) {
    const store = new PostgresStore(config.databaseUrl, { max: options.poolSize ?? 10, timeoutMs: config.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS })
    try {
      await migrateStore(store, postgresMigrations())
    } catch (err) {
      await store.close().catch(() => {})
      throw err
    }
    return store
  }
  const store = new SqliteStore(openDatabase(config.databasePath))
  // searches run on a thread of their own (db/read-worker.ts), unless told not to (the test kit:
  // the thread is started from a file its bundle does not have)
  if (options.readThread !== false) store.useReadThread(new ReadWorker(config.databasePath))
  return store
}

/** A private in-memory SQLite store (tests). */
export function memoryStore(): SqliteStore {
  return new SqliteStore(openDatabase(':memory:'))
}
