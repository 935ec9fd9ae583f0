import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../src/db/database'
import { MIGRATIONS } from '../../src/db/migrations'
import { POSTGRES_MIGRATIONS } from '../../src/db/migrations-postgres'
import { migrateStore } from '../../src/db/migrate-store'
import { PostgresStore, SqliteStore } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'

/**
 * The PostgreSQL schema against SQLite's: both are built by their own migrations here and compared,
 * and what the triggers compute on PostgreSQL is compared with what SQLite's generated columns hold.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`PostgreSQL migration tests skipped: ${pgSkip}`)

/** Column types PostgreSQL holds wider than SQLite's declared type says (its INTEGER is 32 bits, REAL 4 bytes). */
const WIDER = { 'uploads.declared_size': 'bigint', 'uploads.received_size': 'bigint', 'notes.revision': 'bigint', 'note_revision_counter.n': 'bigint' } as Record<string, string>
const TYPES = { TEXT: 'text', INTEGER: 'integer', REAL: 'double precision' } as Record<string, string>
/** SQLite's `UNIQUE COLLATE NOCASE` column constraint on accounts.email is this index on PostgreSQL. */
const EMAIL_INDEX = { name: 'accounts_email', table: 'accounts', unique: true, columns: ['lower(email)'], where: '' }
/**
 * The full-text index is each back end's own (migration 9): SQLite's FTS5 table `note_search` and its
 * shadow tables, PostgreSQL's table `note_search` of tsvectors; search.test.ts checks what they find.
 */
const SEARCH_INDEX = "'note_search', 'note_search_data', 'note_search_idx', 'note_search_content', 'note_search_docsize', 'note_search_config'"

let pg: PostgresCluster | undefined
let sqlite: Database
let store: PostgresStore
beforeAll(async () => {
  sqlite = openDatabase(':memory:')
  if (pgSkip) return
  pg = await startPostgres()
  store = new PostgresStore(await pg.createDatabase('schema'))
  await migrateStore(store, POSTGRES_MIGRATIONS)
}, 60_000)
afterAll(async () => {
  await store?.close()
  await pg?.stop()
  sqlite.close()
})

interface IndexShape { name: string; table: string; unique: boolean; columns: string[]; where: string }

/** `CREATE [UNIQUE] INDEX name ON [public.]table [USING btree] (a, b DESC, lower(c)) [WHERE …]`, taken apart. */
function indexShape(sql: string): IndexShape {
  const head = /^CREATE (UNIQUE )?INDEX (\w+) ON (?:public\.)?(\w+)(?: USING btree)?\s*\(/i.exec(sql.trim())
  if (!head) throw new Error(`not an index definition: ${sql}`)
  const text = sql.trim()
  let depth = 1
  let i = head[0].length
  let part = ''
  const columns: string[] = []
  for (; depth > 0; i++) {
    const c = text[i]!
    if (c === '(') depth++
    if (c === ')') depth--
    if ((c === ',' && depth === 1) || depth === 0) {
      columns.push(part.trim().replace(/\s+/g, ' ').toLowerCase().replace(/^(\w+) collate nocase$/, 'lower($1)'))
      part = ''
    } else part += c
  }
  const where = text.slice(i).trim().replace(/^WHERE/i, '').replace(/[()\s]/g, '').toLowerCase()
  return { name: head[2]!, table: head[3]!, unique: Boolean(head[1]), columns, where }
}

describe.skipIf(pgSkip !== null)('the PostgreSQL schema after its migrations', () => {
  test('has the same tables, with the same columns in the same order, as SQLite after its migrations', async () => {
    const tables = sqlite.query<{ name: string }, []>(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN (${SEARCH_INDEX}) ORDER BY name`).all().map(r => r.name)
    const pgTables = (await store.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'note_search' ORDER BY table_name COLLATE \"C\"")).map(r => r.name)
    expect(pgTables).toEqual(tables)
    expect(tables).toContain('notes')
    for (const table of tables) {
      const columns = sqlite.query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?) ORDER BY cid').all(table).map(r => r.name)
      const pgColumns = (await store.all<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position', ['public', table])).map(r => r.name)
      expect({ table, columns: pgColumns }).toEqual({ table, columns })
    }
  })

  test('every column has the type and nullability of its SQLite column; text is compared bytewise', async () => {
    const columns = sqlite.query<{ tbl: string; name: string; type: string; notnull: number; pk: number }, []>(
      `SELECT m.name AS tbl, c.name, c.type, c."notnull", c.pk FROM sqlite_schema m, pragma_table_xinfo(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT IN (${SEARCH_INDEX})`).all()
    const pgColumns = new Map((await store.all<{ tbl: string; name: string; type: string; nullable: string; collation: string | null }>(
      "SELECT table_name AS tbl, column_name AS name, data_type AS type, is_nullable AS nullable, collation_name AS collation FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'note_search'"))
      .map(c => [`${c.tbl}.${c.name}`, c]))
    expect(pgColumns.size).toBe(columns.length)
    for (const c of columns) {
      const key = `${c.tbl}.${c.name}`
      const p = pgColumns.get(key)!
      // A primary key is never null in PostgreSQL; SQLite lets a non-integer one be (no repository writes one).
      const expected = { key, type: WIDER[key] ?? TYPES[c.type], notNull: c.notnull === 1 || c.pk > 0, collation: c.type === 'TEXT' ? 'C' : null }
      expect({ key, type: p.type as string | undefined, notNull: p.nullable === 'NO', collation: p.collation }).toEqual(expected)
    }
  })

  test('has the same indexes (NOCASE as lower()), unique constraints and primary keys', async () => {
    const named = sqlite.query<{ sql: string }, []>("SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").all().map(r => indexShape(r.sql))
    const pgIndexes = (await store.all<{ def: string }>("SELECT indexdef AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'note_search' AND indexname NOT IN (SELECT conname FROM pg_constraint)")).map(r => indexShape(r.def))
    const byName = (a: IndexShape, b: IndexShape) => a.name.localeCompare(b.name)
    expect(pgIndexes.sort(byName)).toEqual([...named, EMAIL_INDEX].sort(byName))
    expect(named.length).toBeGreaterThan(20)

    // Unique and primary-key constraints, as table: kind columns (accounts.email: the index above instead).
    const constraints = sqlite.query<{ shape: string }, []>(`
      SELECT m.name || ': ' || l.origin || ' ' || (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno)) AS shape
      FROM sqlite_schema m, pragma_index_list(m.name) l WHERE m.type = 'table' AND m.name NOT IN (${SEARCH_INDEX}) AND l.origin IN ('u', 'pk')`).all().map(r => r.shape)
    const pks = sqlite.query<{ shape: string }, []>(`
      SELECT m.name || ': pk ' || group_concat(c.name, ',') AS shape FROM sqlite_schema m, pragma_table_info(m.name) c
      WHERE m.type = 'table' AND c.pk > 0 AND m.name NOT LIKE 'sqlite_%' AND m.name NOT IN (${SEARCH_INDEX}) GROUP BY m.name`).all().map(r => r.shape)
    const pgConstraints = (await store.all<{ shape: string }>(`
      SELECT t.relname || ': ' || CASE c.contype WHEN 'p' THEN 'pk' ELSE 'u' END || ' ' ||
        (SELECT string_agg(a.attname, ',' ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i) JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS shape
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace s ON s.oid = t.relnamespace
      WHERE s.nspname = 'public' AND t.relname <> 'note_search' AND c.contype IN ('p', 'u')`)).map(r => r.shape)
    const expected = new Set([...constraints.filter(s => s !== 'accounts: u email'), ...pks])
    expect(new Set(pgConstraints)).toEqual(expected)
    expect(expected.has('api_keys: u hash')).toBe(true)
  })

  test('foreign keys and their delete actions are those of SQLite', async () => {
    const fks = sqlite.query<{ shape: string }, []>(`
      SELECT m.name || '.' || f."from" || ' -> ' || f."table" || '.' || f."to" || ' ' || f.on_delete AS shape
      FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'`).all().map(r => r.shape)
    const pgFks = (await store.all<{ shape: string }>(`
      SELECT t.relname || '.' || a.attname || ' -> ' || r.relname || '.' || ra.attname || ' ' ||
        CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' WHEN 'a' THEN 'NO ACTION' ELSE c.confdeltype::text END AS shape
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      JOIN pg_attribute ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]
      WHERE c.contype = 'f' AND t.relname <> 'note_search'`)).map(r => r.shape)
    expect(new Set(pgFks)).toEqual(new Set(fks))
    expect(fks).toContain('notes.folder_id -> folders.id SET NULL')
  })
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
