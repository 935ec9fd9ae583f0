import { expect, test } from 'bun:test'
import { memoryStore } from '../../src/db/open'
import { migratedMemoryStore } from '../helpers/memory-store'

/**
 * The tests' in-memory SQLite stores are copies of one migrated database (test/helpers/memory-store.ts);
 * what the tests run on must be what `memoryStore()` gives: the same schema, migrations and statistics,
 * the same connection settings, and each copy a database of its own.
 */
const describeDb = (db: ReturnType<typeof memoryStore>['db']) => ({
  schema: db.query('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name').all(),
  migrations: db.query('SELECT version, name FROM schema_migrations ORDER BY version').all(),
  statistics: db.query('SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx').all(),
  settings: ['busy_timeout', 'synchronous', 'foreign_keys', 'cache_size', 'journal_mode', 'encoding', 'page_size'].map(p => [p, db.query(`PRAGMA ${p}`).get()]),
})

test('a copy has the schema, migrations, statistics and connection settings of a freshly migrated store', () => {
  const fresh = describeDb(memoryStore().db)
  expect(fresh.migrations.length).toBeGreaterThan(10)
  expect(describeDb(migratedMemoryStore().db)).toEqual(fresh)
})

test('each copy is a database of its own, and foreign keys are enforced in it', () => {
  const a = migratedMemoryStore().db
  a.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (100000, 'only in a', '2026-01-01')")
  expect(migratedMemoryStore().db.query('SELECT count(*) AS n FROM schema_migrations WHERE version = 100000').get()).toEqual({ n: 0 })
  expect(a.query('SELECT count(*) AS n FROM schema_migrations WHERE version = 100000').get()).toEqual({ n: 1 })
  expect(a.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
})
