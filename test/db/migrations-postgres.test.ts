import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../src/db/database'
import { MIGRATIONS } from '../../src/db/migrations'
import { POSTGRES_MIGRATIONS } from '../../src/db/migrations-postgres'
import { migrateStore } from '../../src/db/migrate-store'
import { PostgresStore, SqliteStore } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'

/**
 * What the triggers compute on PostgreSQL, compared with what SQLite's generated columns hold, and
 * running the migrations. How the two schemas compare is schema-parity.test.ts.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`PostgreSQL migration tests skipped: ${pgSkip}`)

let pg: PostgresCluster | undefined
let sqlite: Database
beforeAll(async () => {
  sqlite = openDatabase(':memory:')
  if (pgSkip) return
  pg = await startPostgres()
}, 60_000)
afterAll(async () => {
  await pg?.stop()
  sqlite.close()
})

const CREATED = '2026-11-10T12:00:00.000Z'
const later = (ms: number, from = CREATED) => new Date(Date.parse(from) + ms).toISOString()
const SECOND = 1000
const DAY = 86_400 * SECOND
/** Text that JSON must escape, or must leave alone. */
const AWKWARD = 'quote " backslash \\ newline \n tab \t cr \r bs \b ff \f ctrl \u0001\u001f del \u007f é 😀 \u2028 </script> ?'

/** Notes whose list item and change class both back ends must compute alike. */
const NOTES: Record<string, unknown>[] = [
  { id: 'n_plain' },
  { id: 'n_awkward', title: AWKWARD, summary: AWKWARD, language: 'fr', processing_stage: 'transcribing', status: 'Summarizing' },
  { id: 'n_pinned', is_pinned: 1, folder_id: 'fld_1', source: 'upload', type: 'audio', style_id: 'meeting' },
  { id: 'n_error', status: 'Error', error_code: 'engine_unavailable', error_message: 'no engine', processing_stage: 'transcribing' },
  // how long after creation it last changed, at and around each class's bound
  ...[0, -5 * SECOND, 1, 60 * SECOND - 1, 60 * SECOND, 60 * SECOND + 1, 600 * SECOND, 600 * SECOND + 1, 3600 * SECOND + 1,
    21_600 * SECOND, 21_600 * SECOND + 1, DAY, DAY + 1, 7 * DAY, 7 * DAY + 1, 30 * DAY, 30 * DAY + 1, 365 * DAY, 365 * DAY + 1, 4000 * DAY]
    .map((ms, i) => ({ id: `n_after_${String(i).padStart(2, '0')}`, updated_at: later(ms) })),
  { id: 'n_year_end', date_created: '2026-12-31T23:59:30.500Z', updated_at: '2027-01-01T00:00:30.500Z' },
  { id: 'n_year_end_past', date_created: '2026-12-31T23:59:30.500Z', updated_at: '2027-01-01T00:00:30.501Z' },
  { id: 'n_leap', date_created: '2028-02-28T12:00:00.000Z', updated_at: '2028-02-29T12:00:00.000Z' },
  { id: 'n_no_millis', date_created: '2026-11-10T12:00:00Z', updated_at: '2026-11-10T12:01:00.000Z' },
  { id: 'n_not_a_time', date_created: 'yesterday', updated_at: 'zzz' },
]

describe.skipIf(pgSkip !== null)('what the PostgreSQL triggers compute', () => {
  const columns = ['id', 'account_id', 'sandbox', 'folder_id', 'title', 'summary', 'status', 'processing_stage', 'type', 'style_id', 'language', 'is_pinned', 'source', 'error_code', 'error_message', 'date_created', 'updated_at']
  const row = (n: Record<string, unknown>) => columns.map(c => (n[c] ?? { account_id: 'acct_1', sandbox: 0, title: 'T', summary: '', status: 'Done', type: 'import', style_id: 'note', is_pinned: 0, source: 'api', date_created: CREATED, updated_at: CREATED }[c] ?? null) as string | number | null)
  const insert = `INSERT INTO notes (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`
  let db: PostgresStore

  beforeAll(async () => {
    db = new PostgresStore(await pg!.createDatabase('derived'))
    await migrateStore(db, POSTGRES_MIGRATIONS)
    const sqliteStore = new SqliteStore(sqlite)
    for (const s of [db, sqliteStore]) {
      await s.run("INSERT INTO accounts (id, email, grant_period, created_at) VALUES ('acct_1', 'a@example.com', '2026-11', ?)", [CREATED])
      await s.run("INSERT INTO folders (id, account_id, sandbox, name, created_at, updated_at) VALUES ('fld_1', 'acct_1', 0, 'F', ?, ?)", [CREATED, CREATED])
      for (const n of NOTES) await s.run(insert, row(n))
    }
  })
  afterAll(async () => {
    await db?.close()
  })

  test('list_item is byte for byte SQLite\'s json_object, and changed_within its class, for every note', async () => {
    const mine = sqlite.query<{ id: string; list_item: string; changed_within: number }, []>('SELECT id, list_item, changed_within FROM notes ORDER BY id').all()
    const theirs = await db.all<{ id: string; list_item: string; changed_within: number }>('SELECT id, list_item, changed_within FROM notes ORDER BY id')
    expect(theirs).toEqual(mine)
    expect(mine.length).toBe(NOTES.length)
    // the classes, as the rule says: one per bound, 0 for "never", 9 past a year (and for a date that is none)
    expect(mine.filter(n => n.id.startsWith('n_after_')).map(n => n.changed_within)).toEqual([0, 0, 1, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9])
    expect(JSON.parse(mine.find(n => n.id === 'n_awkward')!.list_item).title).toBe(AWKWARD)
  })

  test('a change of any field changes the list item as SQLite does', async () => {
    const change = "UPDATE notes SET title = ?, folder_id = NULL, is_pinned = 0, updated_at = ? WHERE id = 'n_pinned'"
    sqlite.query(change).run('renamed "again"', later(90 * SECOND))
    await db.run(change, ['renamed "again"', later(90 * SECOND)])
    const read = 'SELECT list_item, changed_within FROM notes WHERE id = ?'
    expect(await db.get(read, ['n_pinned'])).toEqual(sqlite.query(read).get('n_pinned') as never)
  })

  test('every insert and update gives a new revision; the counter moves once per transaction that changes a note', async () => {
    const counter = async () => Number((await db.get<{ n: string }>('SELECT n FROM note_revision_counter'))!.n)
    const revision = async (id: string) => Number((await db.get<{ revision: string }>('SELECT revision FROM notes WHERE id = ?', [id]))?.revision)
    const before = await counter()
    const r0 = await revision('n_plain')
    await db.run("UPDATE notes SET summary = 's' WHERE id = 'n_plain'")
    const r1 = await revision('n_plain')
    expect(r1).toBeGreaterThan(r0)
    expect(await counter()).toBe(before + 1)

    await db.run("UPDATE notes SET summary = 's' WHERE id = 'no such note'")
    expect(await counter()).toBe(before + 1)

    // many rows in one transaction: one move, seen by others only at commit
    let release!: () => void
    const hold = new Promise<void>(r => (release = r))
    let changed!: () => void
    const didChange = new Promise<void>(r => (changed = r))
    const tx = db.transaction(async t => {
      await t.run("UPDATE notes SET summary = 'bulk' WHERE id LIKE 'n_after_%'")
      await t.run(insert, row({ id: 'n_new' }))
      changed()
      await hold
    })
    await didChange
    expect(await counter()).toBe(before + 1)
    release()
    await tx
    expect(await counter()).toBe(before + 2)
    expect(await revision('n_new')).toBeGreaterThan(r1)

    await db.run("DELETE FROM notes WHERE id = 'n_new'")
    expect(await counter()).toBe(before + 3)
  })
})

describe.skipIf(pgSkip !== null)('running the migrations', () => {
  test('three migrators started together on one empty database apply each version exactly once', async () => {
    const url = await pg!.createDatabase('together')
    const stores = [0, 1, 2].map(() => new PostgresStore(url, { max: 2 }))
    try {
      const applied = await Promise.all(stores.map(s => migrateStore(s, POSTGRES_MIGRATIONS)))
      expect(applied.reduce((a, b) => a + b, 0)).toBe(POSTGRES_MIGRATIONS.length)
      const versions = await stores[0]!.all<{ version: number; times: string }>('SELECT version, count(*) AS times FROM schema_migrations GROUP BY version ORDER BY version')
      expect(versions.map(v => [v.version, Number(v.times)])).toEqual(MIGRATIONS.map(m => [m.version, 1]))
      expect(await migrateStore(stores[1]!, POSTGRES_MIGRATIONS)).toBe(0)
    } finally {
      await Promise.all(stores.map(s => s.close()))
    }
  })

  test('a database at a newer version than the build is refused, and left as it was', async () => {
    const s = new PostgresStore(await pg!.createDatabase('newer'))
    try {
      await migrateStore(s, POSTGRES_MIGRATIONS)
      await s.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from the future', 'x')")
      await expect(migrateStore(s, POSTGRES_MIGRATIONS)).rejects.toThrow(`the database is at schema version 99, newer than this build knows (${POSTGRES_MIGRATIONS.at(-1)!.version}); run a newer notesvc or restore a backup`)
      expect(Number((await s.get<{ n: string }>('SELECT count(*) AS n FROM schema_migrations'))!.n)).toBe(POSTGRES_MIGRATIONS.length + 1)
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
      await migrateStore(s, POSTGRES_MIGRATIONS)
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
