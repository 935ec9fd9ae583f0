/**
 * The two back ends every repository and ledger test runs on: a private in-memory SQLite store (a copy
 * of one migrated once, test/helpers/memory-store.ts), and a
 * fresh database on one PostgreSQL cluster shared by the whole test run (started on first use, stopped
 * when the test process exits). Each PostgreSQL store is a new database copied from a template that
 * was migrated once, so opening one costs a CREATE DATABASE, not a migration.
 *
 *   for (const b of backEnds) describe.skipIf(b.skip)(`… on ${b.name}`, () => { … await b.open() … })
 *
 * Outside CI without the PostgreSQL binaries the PostgreSQL half is skipped with the reason printed;
 * in CI (CI=true) it must run (postgresUnavailable throws).
 */
import { spawnSync } from 'node:child_process'
import { migratedMemoryStore } from './memory-store'
import { migrateStore } from '../../src/db/migrate-store'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { PostgresStore, type Store } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from './postgres'

export interface BackEnd {
  name: 'sqlite' | 'postgres'
  /** true when this back end cannot run here (PostgreSQL binaries absent outside CI) */
  skip: boolean
  /** a new, empty, migrated store of this back end; close it when done */
  open(): Promise<Store>
}

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`PostgreSQL back-end tests skipped: ${pgSkip}`)

let cluster: Promise<{ pg: PostgresCluster; template: string }> | null = null
let databases = 0

/** The PostgreSQL cluster shared by this test process, with a migrated template database. */
export function sharedPostgres(): Promise<{ pg: PostgresCluster; template: string }> {
  cluster ??= (async () => {
    const pg = await startPostgres()
    // stopped by the preload's global afterAll; if the run is killed first, on the process's exit
    process.once('exit', () => { spawnSync('sh', ['-c', pg.stopCommand], { stdio: 'ignore' }) })
    const templateUrl = await pg.createDatabase('notesvc_template')
    const store = new PostgresStore(templateUrl, { max: 1 })
    await migrateStore(store, postgresMigrations())
    await store.close()
    return { pg, template: 'notesvc_template' }
  })()
  return cluster
}

/** Stops the shared cluster if this run started one (the preload's global afterAll). */
export async function stopSharedPostgres(): Promise<void> {
  if (!cluster) return
  const { pg } = await cluster
  cluster = null
  await pg.stop()
}

/** A new database on the shared cluster, migrated (copied from the template), and its URL. */
export async function freshPostgresUrl(): Promise<string> {
  const { pg, template } = await sharedPostgres()
  return pg.createDatabase(`notesvc_${process.pid}_${++databases}`, template)
}

export const backEnds: BackEnd[] = [
  { name: 'sqlite', skip: false, open: async () => migratedMemoryStore() },
  { name: 'postgres', skip: pgSkip !== null, open: async () => new PostgresStore(await freshPostgresUrl(), { max: 4 }) },
]
