import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase } from '../../src/db/database'
import { MIGRATIONS } from '../../src/db/migrations'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { migrateStore } from '../../src/db/migrate-store'
import { PostgresStore, SqliteStore } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'

/**
 * Running the migrations: on PostgreSQL under its advisory lock, several migrators at once, a database
 * newer than the build, and a database of another locale; on SQLite through the same runner. How the
 * two schemas compare, and what their triggers derive, is schema-parity.test.ts.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`PostgreSQL migration tests skipped: ${pgSkip}`)

let pg: PostgresCluster | undefined
beforeAll(async () => {
  if (pgSkip) return
  pg = await startPostgres()
}, 60_000)
afterAll(async () => {
  await pg?.stop()
})

describe.skipIf(pgSkip !== null)('running the migrations', () => {
  test('three migrators started together on one empty database apply each version exactly once', async () => {
    const url = await pg!.createDatabase('together')
    const stores = [0, 1, 2].map(() => new PostgresStore(url, { max: 2 }))
    try {
      const applied = await Promise.all(stores.map(s => migrateStore(s, postgresMigrations())))
      expect(applied.reduce((a, b) => a + b, 0)).toBe(postgresMigrations().length)
      const versions = await stores[0]!.all<{ version: number; times: string }>('SELECT version, count(*) AS times FROM schema_migrations GROUP BY version ORDER BY version')
      expect(versions.map(v => [v.version, Number(v.times)])).toEqual(MIGRATIONS.map(m => [m.version, 1]))
      expect(await migrateStore(stores[1]!, postgresMigrations())).toBe(0)
    } finally {
      await Promise.all(stores.map(s => s.close()))
    }
  })

  test('a database at a newer version than the build is refused, and left as it was', async () => {
    const s = new PostgresStore(await pg!.createDatabase('newer'))
    try {
      await migrateStore(s, postgresMigrations())
      await s.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 'x')")
      await expect(migrateStore(s, postgresMigrations())).rejects.toThrow(`the database is at schema version 99, newer than this build knows (${postgresMigrations().at(-1)!.version}); run a newer notesvc or restore a backup`)
      expect(Number((await s.get<{ n: string }>('SELECT count(*) AS n FROM schema_migrations'))!.n)).toBe(postgresMigrations().length + 1)
    } finally {
      await s.close()
    }
  })

  test('text orders bytewise, and emails are unique without regard to ASCII case, as in SQLite, in a database of another locale', async () => {
    const admin = new Bun.SQL(pg!.url)
    await admin.unsafe("CREATE DATABASE english TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'")
    await admin.close()
    const s = new PostgresStore(pg!.url.replace(/\/postgres$/, '/english'))
    const lite = new SqliteStore(openDatabase(':memory:'))
    try {
      await migrateStore(s, postgresMigrations())
      const emails = ['B@example.com', 'a@example.com', 'a_1@example.com', 'a1@example.com', 'A@EXAMPLE.COM', 'É@example.com', 'é@example.com']
      const outcome = async (store: PostgresStore | SqliteStore) => {
        const results: string[] = []
        for (const [i, email] of emails.entries()) {
          results.push(await store.run("INSERT INTO accounts (id, email, grant_period, created_at) VALUES (?, ?, '2026-11', 'x')", [`${email} ${i}`, email]).then(() => 'ok', () => 'taken'))
        }
        // (ids: ORDER BY email is case-insensitive in SQLite, whose column is NOCASE; PostgreSQL orders lower(email))
        const order = (await store.all<{ id: string }>('SELECT id FROM accounts ORDER BY id')).map(r => r.id)
        return { results, order }
      }
      const expected = await outcome(lite)
      expect(expected.results).toEqual(['ok', 'ok', 'ok', 'ok', 'taken', 'ok', 'ok'])
      expect(await outcome(s)).toEqual(expected)
    } finally {
      await s.close()
      await lite.close()
    }
  })
})

test('the SQLite store is migrated by the runner of database.ts, and a newer one refused', async () => {
  const lite = new SqliteStore(new (await import('bun:sqlite')).Database(':memory:'))
  expect(await migrateStore(lite, MIGRATIONS)).toBe(MIGRATIONS.length)
  expect(await migrateStore(lite, MIGRATIONS)).toBe(0)
  await expect(migrateStore(lite, MIGRATIONS.slice(0, 3))).rejects.toThrow('newer than this build knows (3)')
  await lite.close()
})
