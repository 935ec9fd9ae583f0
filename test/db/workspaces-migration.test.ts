/**
 * Migration 32 (workspaces) on a database from before it: a library filled through the API, copied row
 * by row into a database migrated only to version 31 (the columns that existed then), then migrated to
 * 32. Each account's rows must be its personal workspace's: its only membership is its own (owner), each
 * key verifies to the account as owner, balances are unchanged, and listNotes and search answer the same
 * pages as before. On SQLite and on PostgreSQL.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { createTestApp } from '../helpers/app'
import { backEnds, sharedPostgres } from '../helpers/backends'
import { migrateStore } from '../../src/db/migrate-store'
import { MIGRATIONS } from '../../src/db/migrations'
import { postgresMigrations } from '../../src/db/migrations-postgres'
import { PostgresStore, SqliteStore, type SqlValue, type Store } from '../../src/db/store'
import { voicedNote } from '../helpers/voiced-note'

const BEFORE = 31
/** what each back end's triggers fill themselves (as `notesvc db copy` leaves them, src/db/copy.ts) */
const TRIGGER_FILLED = new Set(['schema_migrations', 'note_revision_counter', 'search_keys', ...['', '_data', '_idx', '_content', '_docsize', '_config'].map(s => `note_search${s}`)])
const TRIGGER_COMPUTED_ON_POSTGRES = new Set(['list_item', 'changed_within', 'revision'])

type TestApp = ReturnType<typeof createTestApp>
/** webhooks to a loopback URL (nothing is delivered: no note completes after the copy) */
const ENV = { NOTESVC_ALLOW_PRIVATE_URLS: '1' }

/** One person's library, filled through the API: notes (one with a transcript), a folder, tags, a named voice, a webhook. */
async function fillLibrary(t: TestApp, email: string, word: string) {
  const { key, account } = await t.services.accounts.createKey({ email, plan: 'pro' })
  const { key: sandboxKey } = await t.services.accounts.createKey({ email, sandbox: true })
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await t.call(method, path, { token: key, body })
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`)
    return res.body
  }
  const folder = await ok('POST', '/v1/folders', { name: `${word} folder` })
  const tag = await ok('POST', '/v1/tags', { name: `${word}-tag` })
  const notes: string[] = []
  for (let i = 0; i < 3; i++) {
    const note = await ok('POST', '/v1/notes', { title: `${word} note ${i}`, content: `The ${word} plan, part ${i}.`, ...(i === 0 ? { folderId: folder.id } : {}) })
    notes.push(note.id)
  }
  await ok('POST', `/v1/notes/${notes[1]}/tags`, { tags: [tag.name] })
  const { noteId } = await voicedNote(t, key, { title: `${word} meeting`, text: `We talk about ${word} today.`, speakerName: `${word} speaker` })
  await ok('POST', '/v1/webhooks', { url: `http://127.0.0.1:8080/${word}`, events: ['note.completed'] })
  return { accountId: account.id, key, sandboxKey, notes: [...notes, noteId], word, folderId: folder.id as string, tagId: tag.id as string }
}

/** The tables of a SQLite database, each after the tables it refers to. */
function tablesInOrder(db: Database): string[] {
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").all().map(r => r.name)
  const ordered: string[] = []
  const visit = (table: string) => {
    if (ordered.includes(table)) return
    for (const r of db.query<{ table: string }, [string]>('SELECT "table" FROM pragma_foreign_key_list(?)').all(table)) if (r.table !== table) visit(r.table)
    ordered.push(table)
  }
  for (const n of names) if (!TRIGGER_FILLED.has(n)) visit(n)
  return ordered
}

async function columnsOf(store: Store, table: string): Promise<Set<string>> {
  const rows = store instanceof SqliteStore
    ? store.db.query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0').all(table)
    : await store.all<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?', [table])
  return new Set(rows.map(r => r.name))
}

/** Every row of `source` copied into `target` (at version 31): the columns both have, parents first. */
async function copyRows(source: Database, target: Store): Promise<number> {
  let copied = 0
  for (const table of tablesInOrder(source)) {
    const there = await columnsOf(target, table)
    if (there.size === 0) continue // a table of migration 32: nothing held it before
    const columns = source.query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid').all(table)
      .map(c => c.name).filter(c => there.has(c) && !(target instanceof PostgresStore && table === 'notes' && TRIGGER_COMPUTED_ON_POSTGRES.has(c)))
    const insert = `INSERT INTO "${table}" (${columns.map(c => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`
    for (const row of source.query<Record<string, SqlValue>, []>(`SELECT ${columns.map(c => `"${c}"`).join(', ')} FROM "${table}" ORDER BY rowid`).all()) {
      await target.run(insert, columns.map(c => row[c] ?? null))
      copied++
    }
  }
  return copied
}

async function storeAtVersion31(backEnd: 'sqlite' | 'postgres', n: number): Promise<Store> {
  if (backEnd === 'sqlite') {
    const store = new SqliteStore(new Database(':memory:', { strict: true }))
    store.db.exec('PRAGMA foreign_keys = ON')
    await migrateStore(store, MIGRATIONS.filter(m => m.version <= BEFORE))
    return store
  }
  const { pg } = await sharedPostgres()
  const store = new PostgresStore(await pg.createDatabase(`notesvc_ws_mig_${process.pid}_${n}`), { max: 4 })
  await migrateStore(store, postgresMigrations().filter(m => m.version <= BEFORE))
  return store
}

type Person = Awaited<ReturnType<typeof fillLibrary>>

/** What a person sees of their library: list pages (first, second, a folder, a tag), a search, one note, the balance. */
async function pagesOf(t: TestApp, { key, word, folderId, tagId }: Person) {
  const get = async (path: string) => {
    const res = await t.call('GET', path, { token: key })
    return { path, status: res.status, body: res.body }
  }
  return [
    await get('/v1/notes?limit=2'),
    await get('/v1/notes?limit=2&offset=2'),
    await get('/v1/notes?limit=50'),
    await get(`/v1/notes?folderId=${folderId}`),
    await get(`/v1/notes?tag=${tagId}`),
    await get(`/v1/notes?q=${word}`),
    await get(`/v1/notes?q=${word}+meeting`),
    await get('/v1/folders'),
    await get('/v1/tags'),
    await get('/v1/speakers'),
    await get('/v1/webhooks'),
    await get('/v1/usage'),
  ]
}

const opened: Store[] = []
afterAll(async () => {
  for (const s of opened) await s.close()
})

for (const b of backEnds) {
  describe.skipIf(b.skip)(`migration 32 on a database of version 31, on ${b.name}`, () => {
    test('each account\'s rows are its personal workspace\'s, its keys act as its owner, its pages unchanged', async () => {
      const source = createTestApp({ env: ENV })
      const people = [await fillLibrary(source, 'ada@example.com', 'apricot'), await fillLibrary(source, 'bo@example.com', 'blueberry')]
      // credits: a purchase on one, a grant partly spent on the other
      source.db.run('UPDATE accounts SET purchased_credits = 1234 WHERE id = ?', [people[0]!.accountId])
      source.db.run('UPDATE accounts SET grant_used = 17 WHERE id = ?', [people[1]!.accountId])
      const before = await Promise.all(people.map(p => pagesOf(source, p)))
      const balanceSql = 'SELECT id, plan, grant_period, grant_used, purchased_credits FROM accounts ORDER BY id'
      const balancesBefore = source.db.query(balanceSql).all()

      const store = await storeAtVersion31(b.name, 1)
      opened.push(store)
      expect(await copyRows(source.db, store)).toBeGreaterThan(20)
      expect(Number((await store.get<{ v: number }>('SELECT max(version) AS v FROM schema_migrations'))!.v)).toBe(BEFORE)
      await migrateStore(store, b.name === 'sqlite' ? MIGRATIONS : postgresMigrations())
      // migrated through 32 (and whatever later ones there are, which the app below expects)
      expect(Number((await store.get<{ v: number }>('SELECT max(version) AS v FROM schema_migrations'))!.v)).toBeGreaterThanOrEqual(32)

      const after = createTestApp({ store, env: ENV })
      for (const p of people) {
        expect(await after.services.workspacesRepo.membershipsOf(p.accountId)).toEqual([{ id: p.accountId, name: null, kind: 'person', role: 'owner' }])
        for (const [key, sandbox] of [[p.key, false], [p.sandboxKey, true]] as const) {
          const principal = await after.services.accounts.verifyApiKey(key)
          expect({ accountId: principal?.accountId, role: principal?.role, actorId: principal?.actorId, sandbox: principal?.sandbox })
            .toEqual({ accountId: p.accountId, role: 'owner', actorId: p.accountId, sandbox })
        }
      }
      expect(await store.all(balanceSql)).toEqual(balancesBefore.map(r => ({ ...(r as object) })))
      const afterPages = await Promise.all(people.map(p => pagesOf(after, p)))
      expect(afterPages).toEqual(before)
      // the pages hold what each person made, and none of the other's
      for (const [i, p] of people.entries()) {
        const listed = before[i]![2]!.body.data.map((n: { id: string }) => n.id).sort()
        expect(listed).toEqual([...p.notes].sort())
        expect(before[i]![5]!.body.data.length).toBeGreaterThan(0)
        expect(before[i]!.every(page => page.status === 200)).toBe(true)
      }
    })
  })
}
