import { SqliteStore } from '../../src/db/store'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { fixedClock } from '../../src/clock'
import { loadConfig } from '../../src/config'
import { copyToPostgres, CopyRefused, type CopyReport } from '../../src/db/copy'
import { openDatabase } from '../../src/db/database'
import { migrateStore } from '../../src/db/migrate-store'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { PostgresStore } from '../../src/db/store'
import { createIdGenerator } from '../../src/ids'
import type { Principal } from '../../src/http/admission'
import { createServices } from '../../src/services'
import { createApp } from '../../src/app'
import { silentLogger } from '../../src/log'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'
import { run, tempDir } from '../helpers/process'

/**
 * `notesvc db copy`: a SQLite installation made through the real services (accounts, keys, folders,
 * notes of every kind, uploads, jobs, charges, a refund and top-ups, a session, an OAuth client),
 * copied into PostgreSQL by the function and by the CLI, then compared table by table.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`db copy tests skipped: ${pgSkip}`)

/** The two tables each back end keeps for itself (its migrations, its note counter); every other one is copied. */
/** …and each its own search index (migration 9): SQLite's FTS5 table and its shadow tables, rebuilt by PostgreSQL's triggers; SQLite's search rows (migration 30), kept by its triggers */
const KEPT_BY_EACH = ['schema_migrations', 'note_revision_counter', 'search_keys', ...['', '_data', '_idx', '_content', '_docsize', '_config'].map(s => `note_search${s}`)]
/** 520 notes in a loop, one failed, one in the sandbox, one of bob's, one waiting for its upload */
const NOTES = 524
const AWKWARD = 'Réunion "Q4" \\ plan\n\t– 😀 </script>'

const data = tempDir('notesvc-copy-')
const databasePath = join(data.path, 'notesvc.db')
let pg: PostgresCluster | undefined
let source: Database
let copied: CopyReport
let target: PostgresStore
/** Alice's live key, to ask both servers the same questions */
let aliceKey: string

/** An installation with some of everything, written through the services as the server writes it. */
async function buildInstallation() {
  const config = loadConfig({ NOTESVC_PUBLIC_URL: 'http://localhost', NOTESVC_DATA_DIR: data.path, NOTESVC_MODELS_DIR: join(data.path, 'models'), NOTESVC_LLM: 'builtin' })
  expect(config.databasePath).toBe(databasePath)
  const db = openDatabase(config.databasePath)
  const clock = fixedClock('2026-11-10T12:00:00.000Z')
  const s = createServices({ config, store: new SqliteStore(db), clock, ids: createIdGenerator(() => clock.now().getTime()) })
  try {
    const alice = await s.accounts.createKey({ email: 'Alice@example.com', name: 'live' })
    aliceKey = alice.key
    await s.accounts.createKey({ email: 'alice@example.com', sandbox: true, name: 'sandbox' })
    const bob = await s.accounts.createKey({ email: 'bob@example.com', plan: 'pro', name: 'bob' })
    await s.accounts.revokeKey((await s.accounts.createKey({ email: 'bob@example.com', name: 'old' })).info.id)
    const lib = { accountId: alice.account.id, sandbox: false }
    const principal: Principal = { ...lib, scopes: new Set(), credentialId: alice.info.id, source: 'api_key' }

    const work = await s.folders.create(lib, { name: 'Work', color: '#ff0000' })
    await s.folders.create(lib, { name: 'archive' })
    await s.folders.create({ accountId: bob.account.id, sandbox: false }, { name: 'Bob' })
    // 520 notes: more than one batch, more than one page; some created in the same millisecond (ties by id)
    for (let i = 0; i < 520; i++) {
      if (i % 3 !== 0) clock.advance(1500)
      const note = await s.notes.create(lib, { title: i % 7 === 0 ? `${AWKWARD} ${i}` : `note ${i}`, content: `text of ${i}`, ...(i % 5 === 0 ? { folderId: work.id } : {}) })
      if (i % 11 === 0) {
        clock.advance(120_000)
        await s.notes.update(lib, note.id, { isPinned: true })
      }
    }
    const failed = await s.notes.createPending(lib, { title: 'call.m4a', type: 'audio', styleId: 'meeting', language: 'de', source: 'upload', stage: 'transcribing' })
    await s.notes.fail(failed.id, 'engine_unavailable', 'No speech engine is installed.')
    await s.notes.create({ accountId: alice.account.id, sandbox: true }, { title: 'sandbox note', content: 'x' })
    await s.notes.create({ accountId: bob.account.id, sandbox: false }, { title: 'bob note', content: 'y' })
    const upload = await s.uploads.createUpload(principal, { fileName: 'interview.mp3', contentType: 'audio/mpeg', fileSize: 5_000_000_000 })
    await s.jobs.enqueue('job_copytest', upload.noteId, 'process_upload', clock.now().toISOString())

    // the ledger: charges, a refund, top-ups (negative credits), on both accounts
    await s.credits.charge({ accountId: alice.account.id, operation: 'createSummary', credits: 3, source: 'api_key' })
    const refunded = await s.credits.charge({ accountId: alice.account.id, operation: 'createTranscription', credits: 5, source: 'api_key', noteId: failed.id })
    await s.credits.refund(refunded.usageId)
    await s.accounts.addPurchasedCredits('alice@example.com', 25)
    await s.credits.charge({ accountId: alice.account.id, operation: 'createSummary', credits: 70, source: 'mcp' })
    await s.credits.charge({ accountId: bob.account.id, operation: 'createSummary', credits: 40, source: 'oauth' })
    await s.accounts.addPurchasedCredits('bob@example.com', 7)

    await s.web.setPassword('alice@example.com', 'correct horse battery staple')
    expect((await s.web.signIn('alice@example.com', 'correct horse battery staple', '127.0.0.1')).ok).toBe(true)
    await s.web.signIn('alice@example.com', 'wrong password', '127.0.0.1')
    await s.oauth.register({ client_name: 'Copy test', redirect_uris: ['http://127.0.0.1:9999/callback'], token_endpoint_auth_method: 'none' })
  } finally {
    db.close()
  }
}

beforeAll(async () => {
  await buildInstallation()
  source = new Database(databasePath, { readonly: true })
  if (pgSkip) return
  pg = await startPostgres()
  copied = await copyToPostgres({ sqlitePath: databasePath, targetUrl: await pg.createDatabase('copied') })
  target = new PostgresStore(pg.url.replace(/\/postgres$/, '/copied'))
}, 120_000)
afterAll(async () => {
  await target?.close()
  await pg?.stop()
  source?.close()
  data.remove()
})

const tables = () => source.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all().map(r => r.name)
const sourceCount = (table: string) => source.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n

describe.skipIf(pgSkip !== null)('db copy into an empty PostgreSQL database', () => {
  test('the installation has some of everything', () => {
    for (const t of ['accounts', 'api_keys', 'folders', 'notes', 'note_bodies', 'usage', 'uploads', 'jobs', 'sessions', 'sign_in_failures', 'oauth_clients', 'settings']) {
      expect({ t, rows: sourceCount(t) > 0 }).toEqual({ t, rows: true })
    }
    expect(source.query<{ n: number }, []>("SELECT count(*) AS n FROM notes WHERE status = 'Error'").get()!.n).toBe(1)
    expect(source.query<{ n: number }, []>('SELECT count(*) AS n FROM notes WHERE is_pinned = 1 AND folder_id IS NOT NULL').get()!.n).toBeGreaterThan(0)
    expect(source.query<{ n: number }, []>('SELECT count(*) AS n FROM usage WHERE refund_of IS NOT NULL').get()!.n).toBe(1)
    expect(source.query<{ n: number }, []>("SELECT count(*) AS n FROM usage WHERE operation = 'topUp'").get()!.n).toBe(2)
  })

  test('every table but the two each back end keeps is copied, with the same number of rows', async () => {
    const copiedTables = tables().filter(t => !KEPT_BY_EACH.includes(t))
    expect(copied.tables.map(t => t.table).sort()).toEqual(copiedTables)
    for (const t of copiedTables) {
      const rows = Number((await target.get<{ n: string }>(`SELECT count(*) AS n FROM ${t}`))!.n)
      expect({ t, rows }).toEqual({ t, rows: sourceCount(t) })
      expect({ t, reported: copied.tables.find(c => c.table === t)!.rows }).toEqual({ t, reported: sourceCount(t) })
    }
    // every copied note is in PostgreSQL's search index, which its triggers filled
    expect(Number((await target.get<{ n: string }>('SELECT count(*) AS n FROM note_search'))!.n)).toBe(NOTES)
    // parents before the tables that refer to them
    const order = copied.tables.map(t => t.table)
    for (const [child, parent] of [['notes', 'folders'], ['note_bodies', 'notes'], ['uploads', 'notes'], ['jobs', 'notes'], ['oauth_tokens', 'oauth_clients'], ['api_keys', 'accounts']]) {
      expect(order.indexOf(child!)).toBeGreaterThan(order.indexOf(parent!))
    }
  })

  test('the copy is vacuumed and analysed before a server plans on it', async () => {
    const stats = await target.all<{ relname: string; analysed: boolean; vacuumed: boolean }>(
      'SELECT relname, last_analyze IS NOT NULL AS analysed, last_vacuum IS NOT NULL AS vacuumed FROM pg_stat_user_tables')
    const byTable = new Map(stats.map(r => [r.relname, r]))
    for (const t of ['notes', 'note_bodies', 'note_search', 'usage', 'accounts']) {
      expect({ t, analysed: byTable.get(t)?.analysed, vacuumed: byTable.get(t)?.vacuumed }).toEqual({ t, analysed: true, vacuumed: true })
    }
  })

  test('the ledger is the same: usage per account (count and sums) and every balance column', async () => {
    const usageSql = 'SELECT account_id, count(*) AS n, sum(credits) AS credits, sum(grant_credits) AS g, sum(purchased_credits) AS p FROM usage GROUP BY account_id ORDER BY account_id'
    const balanceSql = 'SELECT id, grant_period, grant_used, purchased_credits FROM accounts ORDER BY id'
    const usage = (await target.all<{ account_id: string; n: string; credits: string; g: string; p: string }>(usageSql)).map(r => ({ ...r, n: Number(r.n), credits: Number(r.credits), g: Number(r.g), p: Number(r.p) }))
    expect(usage).toEqual(source.query(usageSql).all() as never)
    expect(await target.all(balanceSql)).toEqual(source.query(balanceSql).all() as never)
    // charges less the refund; a top-up spends nothing (0 credits, the prepaid credits it adds in purchased_credits)
    expect(copied.ledger).toMatchObject({ accounts: 2, usageRows: 7, credits: 3 + 5 + 70 + 40 - 5, purchased: 25 - (70 - 57) + 7 })
  })

  test('every row of every table holds the same values, media storage keys included (the computed columns aside)', async () => {
    for (const t of copied.tables.map(c => c.table)) {
      const columns = source.query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?)').all(t).map(c => c.name).filter(c => !['list_item', 'changed_within', 'revision'].includes(c))
      const sql = `SELECT ${columns.join(', ')} FROM ${t} ORDER BY ${columns.join(', ')}`
      const theirs = (await target.all<Record<string, unknown>>(sql)).map(r => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k.endsWith('_size') && v !== null ? Number(v) : v])))
      expect({ t, rows: theirs }).toEqual({ t, rows: source.query(sql).all() as never })
    }
    expect(await target.get('SELECT storage_key, declared_size FROM uploads')).toEqual({ storage_key: expect.stringMatching(/^uploads\/note_/), declared_size: '5000000000' })
  })

  test('every note\'s list item and change class, computed by PostgreSQL, are the ones SQLite stores', async () => {
    const sql = 'SELECT id, list_item, changed_within FROM notes ORDER BY id'
    const theirs = await target.all(sql)
    expect(theirs).toEqual(source.query(sql).all() as never)
    expect(theirs.length).toBe(NOTES)
    expect(copied.notesChecked).toBe(NOTES)
  })

  test('a listNotes page, a filtered one and a deep one are the same text on both', async () => {
    const accountId = source.query<{ id: string }, []>("SELECT id FROM accounts WHERE email = 'Alice@example.com'").get()!.id
    const pages = [
      'SELECT list_item FROM notes WHERE account_id = ? AND sandbox = 0 ORDER BY date_created DESC, id DESC LIMIT 50',
      'SELECT list_item FROM notes WHERE account_id = ? AND sandbox = 0 AND folder_id IS NOT NULL ORDER BY date_created DESC, id DESC LIMIT 50',
      'SELECT list_item FROM notes WHERE account_id = ? AND sandbox = 0 ORDER BY date_created DESC, id DESC LIMIT 50 OFFSET 450',
      'SELECT id AS list_item FROM folders WHERE account_id = ? AND sandbox = 0 ORDER BY lower(name), id',
    ]
    for (const sql of pages) {
      const page = (rows: { list_item: string }[]) => `[${rows.map(r => r.list_item).join(',')}]`
      const mine = page(source.query<{ list_item: string }, [string]>(sql).all(accountId))
      expect(page(await target.all(sql, [accountId]))).toBe(mine)
      expect(mine.length).toBeGreaterThan(30)
    }
  })

  test('a server on the copy answers the same listNotes pages and the same balance as one on the SQLite file', async () => {
    const config = loadConfig({ NOTESVC_PUBLIC_URL: 'http://localhost', NOTESVC_DATA_DIR: data.path, NOTESVC_LLM: 'builtin', NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' })
    const clock = fixedClock('2026-11-10T12:00:00.000Z')
    const ids = createIdGenerator(() => clock.now().getTime())
    const onSqlite = new SqliteStore(openDatabase(databasePath))
    const onPostgres = new PostgresStore(pg!.url.replace(/\/postgres$/, '/copied'), { max: 2 })
    try {
      const servers = [onSqlite, onPostgres].map(store => createApp({ config, clock, ids, log: silentLogger, services: createServices({ config, store, clock, ids }) }))
      const ask = (path: string) => Promise.all(servers.map(async app => {
        const res = await app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${aliceKey}` } }))
        return { status: res.status, body: await res.text() }
      }))
      const folder = JSON.parse((await ask('/v1/folders'))[0]!.body).data.find((f: { name: string }) => f.name === 'Work').id
      for (const path of ['/v1/notes?limit=50', `/v1/notes?folderId=${folder}&limit=20`, '/v1/notes?limit=50&offset=450', '/v1/notes?folderId=null&status=Done&limit=7&offset=13', '/v1/notes?updatedAfter=2026-11-10T12:30:00.000Z&limit=10', '/v1/folders']) {
        const [sqlite, postgres] = await ask(path)
        expect({ path, ...postgres }).toEqual({ path, ...sqlite! })
        expect(sqlite!.status).toBe(200)
      }
      const [a, b] = await ask('/v1/usage')
      expect(a!.status).toBe(200)
      expect(JSON.parse(b!.body).balance).toEqual(JSON.parse(a!.body).balance)
      expect(JSON.parse(a!.body).balance.totalRemaining).toBe(60 + 25 - 3 - 70)
    } finally {
      await onSqlite.close()
      await onPostgres.close()
    }
  })

  test('a second copy into the same database is refused, says what to do, and changes nothing', async () => {
    const url = pg!.url.replace(/\/postgres$/, '/copied')
    const before = Number((await target.get<{ n: string }>('SELECT count(*) AS n FROM notes'))!.n)
    const refusal = copyToPostgres({ sqlitePath: databasePath, targetUrl: url })
    await expect(refusal).rejects.toBeInstanceOf(CopyRefused)
    await expect(refusal).rejects.toThrow(/already holds rows \(in accounts, api_keys, .*\), and db copy fills only an empty database; nothing was copied\. Copy into a new database/)
    expect(Number((await target.get<{ n: string }>('SELECT count(*) AS n FROM notes'))!.n)).toBe(before)
  })

  test('a copy that does not match is rolled back whole', async () => {
    const url = await pg!.createDatabase('tampered')
    const store = new PostgresStore(url)
    try {
      await migrateStore(store, postgresMigrations())
      // a trigger of someone else's that changes titles on the way in (it runs before notes_derive)
      await store.run('CREATE FUNCTION shout() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.title := upper(NEW.title); RETURN NEW; END $$')
      await store.run('CREATE TRIGGER a_shout BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION shout()')
      await expect(copyToPostgres({ sqlitePath: databasePath, targetUrl: url })).rejects.toThrow(/the copy does not match the SQLite database \(.*note note_\w+: its list item or change class differs.*; it was rolled back and PostgreSQL holds nothing of it/)
      for (const t of ['accounts', 'notes', 'usage']) expect(await store.get(`SELECT 1 AS x FROM ${t} LIMIT 1`)).toBeNull()
    } finally {
      await store.close()
    }
  })

  test('through the CLI: progress on stderr, what it copied and checked on stdout; then a refusal, exit 2', async () => {
    const url = await pg!.createDatabase('by_cli')
    const env = { NOTESVC_DATA_DIR: data.path }
    const first = await run(['bun', 'run', 'src/cli.ts', 'db', 'copy', '--to', url], { env })
    console.log(`--- notesvc db copy (stderr) ---\n${first.stderr}--- notesvc db copy (stdout) ---\n${first.stdout}---`)
    expect(first.code).toBe(0)
    for (const t of copied.tables.filter(c => c.rows > 0)) expect(first.stderr).toMatch(new RegExp(`^${t.table} +100% \\[#{30}\\] ${t.rows}/${t.rows} rows `, 'm'))
    const lines = first.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(new RegExp(`^copied ${databasePath} into postgres://postgres@127\\.0\\.0\\.1:\\d+/by_cli in [\\d.]+ s: \\d+ rows in ${copied.tables.length} tables \\(schema version ${postgresMigrations().at(-1)!.version}; ${postgresMigrations().length} migrations applied to the target first\\)$`))
    const width = Math.max(...copied.tables.map(t => t.table.length))
    for (const t of copied.tables) expect(lines).toContain(`  ${t.table.padEnd(width)}  ${String(t.rows).padStart(8)} row${t.rows === 1 ? '' : 's'}`)
    expect(first.stdout).toContain('checked: the row count of every table is the same in both')
    expect(first.stdout).toContain('checked: the ledger of 2 accounts is the same in both (7 usage rows summing to 113 credits;')
    expect(first.stdout).toContain(`checked: the list item of each of ${NOTES} notes, computed by PostgreSQL, is the one SQLite stores`)

    const again = await run(['bun', 'run', 'src/cli.ts', 'db', 'copy', '--to', url], { env })
    expect(again.code).toBe(2)
    expect(again.stdout).toBe('')
    expect(again.stderr).toMatch(/^notesvc: the PostgreSQL database postgres:\/\/postgres@127\.0\.0\.1:\d+\/by_cli already holds rows .* Copy into a new database/)
  }, 60_000)
})

describe('db copy refuses what it cannot copy, before touching anything', () => {
  test('a target that is not a PostgreSQL URL', async () => {
    await expect(copyToPostgres({ sqlitePath: databasePath, targetUrl: 'mysql://user:secret@db/notes' })).rejects.toThrow('--to must be a PostgreSQL URL (postgres://user:password@host:5432/database), not mysql://user:***@db/notes')
  })

  test('a data folder without a database', async () => {
    const empty = tempDir('notesvc-copy-empty-')
    try {
      const result = await run(['bun', 'run', 'src/cli.ts', 'db', 'copy', '--to', 'postgres://127.0.0.1:1/x'], { env: { NOTESVC_DATA_DIR: empty.path } })
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(`notesvc: there is no notesvc database at ${join(empty.path, 'notesvc.db')}; point NOTESVC_DATA_DIR (or --data-dir) at the data folder`)
    } finally {
      empty.remove()
    }
  })
})
