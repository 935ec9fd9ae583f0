import { afterAll, describe, expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../../src/db/database'
import { PageBoundaries } from '../../../src/modules/notes/page-boundaries'
import { RevisionCache } from '../../../src/modules/notes/revision-cache'
import { SqliteStore, type Store } from '../../../src/db/store'
import { createFoldersRepo } from '../../../src/modules/folders/repo'
import type { NoteFilter, NoteRow, NotesRepo } from '../../../src/modules/notes/repo'
import { createSqliteNotesRepo, notesChangeStamp } from '../../../src/modules/notes/repo.sqlite'
import { notesRepoFor } from '../../../src/services'
import { createRevisionsRepo } from '../../../src/modules/notes/revisions-repo'
import { createNotesService } from '../../../src/modules/notes/service'
import { PageCache } from '../../../src/modules/notes/page-cache'
import { createCreditsRepo } from '../../../src/modules/credits/repo'
import { createIdGenerator } from '../../../src/ids'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { seededRandom } from '../../fixtures/random'

/**
 * listNotes at any offset and with any combination of filters: every page is exactly the slice of the
 * interface's order (newest first by dateCreated, ties by id) that a reference computed here gives,
 * on a stable library and while notes are inserted, changed and deleted, on both back ends (SQLite's
 * tuned path and PostgreSQL's plain query); and on SQLite every query behind a page is read off the
 * index made for its filters — no scan of the table, no sort.
 */

const NOW = Date.parse('2026-11-23T12:00:00.000Z')
const DAY = 86_400_000
const ACCOUNT = 'acct_list'
const LIB = { accountId: ACCOUNT, sandbox: false }
const FOLDERS = ['fld_a', 'fld_b']
const STATUSES = ['Done', 'Error', 'Summarizing'] as const
const TYPES = ['audio', 'video', 'import']
/** How long after creation a note last changed: never, and spans across every class of migration 4. */
const LIFETIMES_MS = [0, 0, 0, 30e3, 5 * 60e3, 40 * 60e3, 3 * 3600e3, 12 * 3600e3, 3 * DAY, 20 * DAY, 200 * DAY, 600 * DAY]

interface Model {
  id: string
  dateCreated: string
  updatedAt: string
  folderId: string | null
  status: string
  type: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The account and folders the generated notes belong to, in a new store. */
async function seedLibrary(store: Store): Promise<Store> {
  await store.run('INSERT INTO accounts (id, email, grant_period, created_at) VALUES (?, ?, ?, ?)', [ACCOUNT, 'list@example.com', '2026-11', iso(NOW - 900 * DAY)])
  for (const f of FOLDERS) await store.run('INSERT INTO folders (id, account_id, sandbox, name, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?)', [f, ACCOUNT, f, iso(NOW - 900 * DAY), iso(NOW - 900 * DAY)])
  return store
}

/** A private SQLite database with the library's account and folders (the SQLite-only tests). */
async function newDatabase(): Promise<Database> {
  const db = openDatabase(':memory:')
  await seedLibrary(new SqliteStore(db))
  return db
}

/**
 * A notes repository on `store` with the given boundaries and remembered items: SQLite's tuned path
 * uses them; PostgreSQL's plain query has none.
 */
function repoOn(store: Store, boundaries: (db: Database) => PageBoundaries, items: RevisionCache | null = null) {
  return store.choose({
    sqlite: s => createSqliteNotesRepo(s, { boundaries: boundaries(s.db), items }),
    postgres: () => notesRepoFor(store),
  })
}

function row(m: Model): NoteRow {
  return {
    id: m.id, account_id: ACCOUNT, sandbox: 0, folder_id: m.folderId, title: `Note ${m.id}`, summary: '', original_transcription: '', structured_content: null,
    status: m.status as NoteRow['status'], processing_stage: null, type: m.type, style_id: 'note', language: null, is_pinned: 0, source: 'api',
    error_code: null, error_message: null, date_created: m.dateCreated, updated_at: m.updatedAt,
  }
}

/** A library of `n` notes over 800 days, some created in the same millisecond (ties go by id). */
function generate(n: number, seed: number): Model[] {
  const rand = seededRandom(seed)
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  const out: Model[] = []
  let created = NOW - 800 * DAY
  for (let i = 0; i < n; i++) {
    if (rand() > 0.1) created += Math.floor(rand() * ((800 * DAY) / n) * 2)
    const updated = Math.min(NOW, created + pick(LIFETIMES_MS))
    out.push({
      id: `note_${String(i).padStart(6, '0')}_${Math.floor(rand() * 1e6).toString(36)}`,
      dateCreated: iso(created),
      updatedAt: iso(updated),
      folderId: rand() < 0.5 ? null : pick(FOLDERS),
      status: pick(STATUSES),
      type: pick(TYPES),
    })
  }
  return out
}

/** The interface's answer, computed from the model: filter, newest first, ties by id. */
function expected(all: Iterable<Model>, f: NoteFilter): string[] {
  return [...all]
    .filter(m => (f.folderId === undefined || m.folderId === f.folderId) && (f.status === undefined || m.status === f.status) &&
      (f.type === undefined || m.type === f.type) && (f.updatedAfter === undefined || m.updatedAt > f.updatedAfter))
    .sort((a, b) => (a.dateCreated !== b.dateCreated ? (a.dateCreated < b.dateCreated ? 1 : -1) : a.id < b.id ? 1 : -1))
    .map(m => m.id)
}

/** Every combination of the list filters, with updatedAfter at instants that split the library differently. */
function filterCombinations(): NoteFilter[] {
  const out: NoteFilter[] = []
  for (const folderId of [undefined, null, 'fld_a'])
    for (const status of [undefined, 'Error'])
      for (const type of [undefined, 'video'])
        for (const updatedAfter of [undefined, iso(NOW - 700 * DAY), iso(NOW - 30 * DAY), iso(NOW - 2 * DAY)]) {
          const f: NoteFilter = {}
          if (folderId !== undefined) f.folderId = folderId
          if (status !== undefined) f.status = status
          if (type !== undefined) f.type = type
          if (updatedAfter !== undefined) f.updatedAfter = updatedAfter
          out.push(f)
        }
  return out
}

const ids = (items: string[]) => items.map(s => (JSON.parse(s) as { id: string }).id)

/** The items of a page whose status, updatedAt or folderId is not the note's current one. */
function stale(items: string[], model: Map<string, Model>): string[] {
  return items.map(s => JSON.parse(s) as Model).filter(i => {
    const m = model.get(i.id)!
    return i.status !== m.status || i.updatedAt !== m.updatedAt || i.folderId !== m.folderId
  }).map(i => `${i.id}: ${i.status} ${i.updatedAt} ${i.folderId}`)
}

for (const b of backEnds) describe.skipIf(b.skip)(`pages at any offset equal the reference order (repository; on SQLite boundaries every 7 rows, items remembered) on ${b.name}`, () => {
  const model = new Map<string, Model>()
  let opened: Store | null = null
  afterAll(async () => {
    await opened?.close()
  })
  let library: Promise<NotesRepo> | null = null
  /** the repository over the generated library, made by the first test that runs */
  const ready = () => (library ??= (async () => {
    const store = (opened = await seedLibrary(await b.open()))
    const notes = repoOn(store, db => new PageBoundaries(notesChangeStamp(db), 7), new RevisionCache(1_000_000))
    await store.transaction(async () => {
      for (const m of generate(1200, 9)) {
        await notes.insert(row(m))
        model.set(m.id, m)
      }
    })
    return notes
  })())

  test('paging from the first page to past the last returns every note once, in order, for every filter combination', async () => {
    const notes = await ready()
    for (const f of filterCombinations()) {
      const want = expected(model.values(), f)
      for (const limit of [1, 13, 100]) {
        const got: string[] = []
        for (let offset = 0; ; offset += limit) {
          const page = ids(await notes.listJson(LIB, f, limit, offset))
          got.push(...page.slice(0, limit))
          if (page.length <= limit) break
        }
        expect([JSON.stringify(f), limit, got]).toEqual([JSON.stringify(f), limit, want])
      }
    }
  }, 120_000)

  test('random offsets, deep ones first, match the reference slice (limit + 1 rows, so hasMore is exact)', async () => {
    const notes = await ready()
    const rand = seededRandom(4)
    for (const f of filterCombinations()) {
      const want = expected(model.values(), f)
      const offsets = [want.length + 3, want.length, want.length - 1, ...Array.from({ length: 12 }, () => Math.floor(rand() * (want.length + 5)))]
      for (const offset of offsets.filter(o => o >= 0)) {
        expect([JSON.stringify(f), offset, ids(await notes.listJson(LIB, f, 20, offset))]).toEqual([JSON.stringify(f), offset, want.slice(offset, offset + 21)])
      }
    }
  }, 60_000)

  test('while notes are inserted, changed (also with a clock that stepped back) and deleted, every page read matches the library at that moment', async () => {
    const notes = await ready()
    const rand = seededRandom(77)
    const combos = filterCombinations()
    let counter = 0
    for (let step = 0; step < 300; step++) {
      const action = rand()
      const existing = [...model.keys()]
      if (action < 0.35) {
        const created = NOW - Math.floor(rand() * 800 * DAY)
        const m: Model = { id: `note_new_${counter++}`, dateCreated: iso(created), updatedAt: iso(created), folderId: rand() < 0.5 ? null : 'fld_a', status: 'Error', type: 'video' }
        await notes.insert(row(m))
        model.set(m.id, m)
      } else if (action < 0.7) {
        const id = existing[Math.floor(rand() * existing.length)]!
        const m = model.get(id)!
        // sometimes earlier than the creation: the repository keeps updatedAt at or after dateCreated
        const at = iso(Date.parse(m.dateCreated) + Math.floor((rand() - 0.2) * 300 * DAY))
        await notes.write(id, { updated_at: at, status: 'Error' })
        model.set(id, { ...m, updatedAt: at > m.dateCreated ? at : m.dateCreated, status: 'Error' })
      } else {
        const id = existing[Math.floor(rand() * existing.length)]!
        expect(await notes.delete(LIB, id)).toBe(true)
        model.delete(id)
      }
      for (let r = 0; r < 3; r++) {
        const f = combos[Math.floor(rand() * combos.length)]!
        const want = expected(model.values(), f)
        const offset = Math.floor(rand() * (want.length + 2))
        const page = await notes.listJson(LIB, f, 10, offset)
        expect([step, JSON.stringify(f), offset, ids(page)]).toEqual([step, JSON.stringify(f), offset, want.slice(offset, offset + 11)])
        // and each item as the note is now, not as it was when first read
        expect([step, stale(page, model)]).toEqual([step, []])
      }
    }
  }, 60_000)
})

for (const b of backEnds) describe.skipIf(b.skip)(`listNotes through the API while the library changes (read cache on, default boundaries) on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('pages of 50 across 2,000 notes, with inserts, renames and deletes between pages', async () => {
    const clock = fixedClock(iso(NOW))
    const t = createTestApp({ clock, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }, store: await open() })
    const key = await t.key()
    const account = await t.services.accounts.ensureAccount('user@example.com')
    const repo = notesRepoFor(t.store)
    const model = new Map<string, Model>()
    await t.store.transaction(async () => {
      for (const m of generate(2000, 5)) {
        await repo.insert({ ...row({ ...m, folderId: null }), account_id: account.id })
        model.set(m.id, { ...m, folderId: null })
      }
    })
    const rand = seededRandom(11)
    const list = async (query: string) => {
      const res = await t.call('GET', `/v1/notes?${query}`, { token: key })
      expect(res.status).toBe(200)
      return res.body as { data: { id: string }[]; pagination: { limit: number; offset: number; hasMore: boolean } }
    }
    for (let round = 0; round < 40; round++) {
      // a change through the API: a new note, a rename, or a deletion
      const action = rand()
      clock.advance(1000)
      if (action < 0.4) {
        const made = await t.call('POST', '/v1/notes', { token: key, body: { title: `new ${round}`, content: 'text' } })
        model.set(made.body.id, { id: made.body.id, dateCreated: made.body.dateCreated, updatedAt: made.body.updatedAt, folderId: null, status: 'Done', type: 'import' })
      } else if (action < 0.7) {
        const id = [...model.keys()][Math.floor(rand() * model.size)]!
        const renamed = await t.call('PATCH', `/v1/notes/${id}`, { token: key, body: { title: `renamed ${round}` } })
        model.set(id, { ...model.get(id)!, updatedAt: renamed.body.updatedAt })
      } else {
        const id = [...model.keys()][Math.floor(rand() * model.size)]!
        expect((await t.call('DELETE', `/v1/notes/${id}`, { token: key })).status).toBe(204)
        model.delete(id)
      }
      for (const f of [{}, { updatedAfter: iso(NOW - 400 * DAY) }, { updatedAfter: iso(NOW - 10 * DAY) }] as NoteFilter[]) {
        const want = expected(model.values(), f)
        const offset = Math.floor(rand() * want.length)
        const q = new URLSearchParams({ limit: '50', offset: String(offset), ...(f.updatedAfter ? { updatedAfter: f.updatedAfter } : {}) })
        const page = await list(q.toString())
        expect([round, q.toString(), page.data.map(n => n.id), page.pagination.hasMore]).toEqual([round, q.toString(), want.slice(offset, offset + 50), offset + 50 < want.length])
      }
    }
  })
})

/** Records every statement the repositories run, with its parameters, so each can be explained. */
function recording(db: Database): { db: Database; seen: { sql: string; params: unknown }[] } {
  const seen: { sql: string; params: unknown }[] = []
  const wrapStatement = (sql: string, st: any) => new Proxy(st, {
    get(target, prop) {
      const v = target[prop]
      if (typeof v !== 'function') return v
      if (['get', 'all', 'values', 'run', 'iterate'].includes(prop as string)) {
        return (...args: unknown[]) => {
          seen.push({ sql, params: args.length === 1 ? args[0] : args })
          return v.apply(target, args)
        }
      }
      return v.bind(target)
    },
  })
  const proxy = new Proxy(db as any, {
    get(target, prop) {
      if (prop === 'query' || prop === 'prepare') return (sql: string) => wrapStatement(sql, target[prop](sql))
      const v = target[prop]
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
  return { db: proxy as Database, seen }
}

function plan(db: Database, sql: string, params: unknown): string[] {
  const st = db.query(`EXPLAIN QUERY PLAN ${sql}`)
  const rows = (Array.isArray(params) ? st.all(...(params as never[])) : st.all(params as never)) as { detail: string }[]
  return rows.map(r => r.detail)
}

/** The index each combination of equality filters must be read from (migrations 1 and 4). */
const INDEX_FOR: Record<string, string> = {
  '': 'notes_newest',
  folder: 'notes_by_folder',
  status: 'notes_by_status',
  type: 'notes_by_type',
  'folder+status': 'notes_by_folder_status',
  'folder+type': 'notes_by_folder_type',
  'status+type': 'notes_by_status_type',
  'folder+status+type': 'notes_by_folder_status_type',
}

function equalityFilters(f: NoteFilter): string {
  return [f.folderId !== undefined && 'folder', f.status !== undefined && 'status', f.type !== undefined && 'type'].filter(Boolean).join('+')
}

for (const b of backEnds) describe.skipIf(b.skip)(`list items remembered in memory are used only at the revision the index shows on ${b.name}`, () => {
  const open = closingAfterEach(b)
  const first = async (notes: NotesRepo) => JSON.parse((await notes.listJson(LIB, {}, 1, 0))[0]!) as { id: string; title: string; folderId: string | null }

  test('a change made outside the repository (another process, plain SQL) is seen on the next page', async () => {
    const store = await seedLibrary(await open())
    const notes = repoOn(store, () => new PageBoundaries(() => ''), new RevisionCache(1_000_000))
    const [m] = generate(1, 3)
    await notes.insert(row(m!))
    expect((await first(notes)).title).toBe(`Note ${m!.id}`)
    await store.run("UPDATE notes SET title = 'changed by hand'")
    expect((await first(notes)).title).toBe('changed by hand')
  })

  // SQLite only: PostgreSQL has no rowids to reuse, and remembers no items
  if (b.name === 'sqlite') test('a deleted note whose rowid SQLite gives to the next note is not shown in its place', async () => {
    const db = await newDatabase()
    const notes = createSqliteNotesRepo(new SqliteStore(db), { boundaries: new PageBoundaries(() => ''), items: new RevisionCache(1_000_000) })
    const [a, b] = generate(2, 8)
    await notes.insert(row(a!))
    await notes.insert(row(b!))
    const before = db.query<{ rowid: number }, []>('SELECT max(rowid) AS rowid FROM notes').get()!.rowid
    const newest = db.query<{ id: string }, [number]>('SELECT id FROM notes WHERE rowid = ?').get(before)!.id
    await notes.listJson(LIB, {}, 10, 0) // both remembered
    expect(await notes.delete(LIB, newest)).toBe(true)
    const replacement: Model = { id: 'note_replacement', dateCreated: iso(NOW), updatedAt: iso(NOW), folderId: null, status: 'Done', type: 'audio' }
    await notes.insert(row(replacement))
    expect(db.query<{ rowid: number }, [string]>('SELECT rowid FROM notes WHERE id = ?').get('note_replacement')!.rowid).toBe(before)
    expect((await first(notes)).id).toBe('note_replacement')
    expect(ids(await notes.listJson(LIB, {}, 10, 0))).toEqual(['note_replacement', [a!, b!].find(n => n.id !== newest)!.id])
  })

  test('a folder deleted by the database itself (ON DELETE SET NULL) shows its notes at the top level', async () => {
    const store = await seedLibrary(await open())
    const notes = repoOn(store, () => new PageBoundaries(() => ''), new RevisionCache(1_000_000))
    const [m] = generate(1, 3)
    await notes.insert(row({ ...m!, folderId: 'fld_a' }))
    expect((await first(notes)).folderId).toBe('fld_a')
    await store.run("DELETE FROM folders WHERE id = 'fld_a'")
    expect((await first(notes)).folderId).toBe(null)
  })
})

describe('query plans: every list query is read off its index, never a scan or a sort', () => {
  for (const statistics of ['no statistics', 'after PRAGMA optimize on a full library']) {
    test(`listNotes, every filter combination and offset (${statistics})`, async () => {
      const plain = await newDatabase()
      const { db, seen } = recording(plain)
      const notes = createSqliteNotesRepo(new SqliteStore(db), { boundaries: new PageBoundaries(notesChangeStamp(plain), 16) })
      for (const m of generate(3000, 21)) await notes.insert(row(m))
      if (statistics !== 'no statistics') plain.exec('PRAGMA optimize=0x10002')
      const problems: string[] = []
      for (const f of filterCombinations()) {
        for (const offset of [0, 40, 900, 5000]) {
          seen.length = 0
          await notes.listJson(LIB, f, 50, offset)
          for (const { sql, params } of seen.filter(s => /FROM notes/.test(s.sql))) {
            const details = plan(plain, sql, params)
            const where = `${JSON.stringify(f)} offset ${offset}: ${sql.replace(/\s+/g, ' ').slice(0, 90)}… → ${details.join(' | ')}`
            if (details.some(d => /^SCAN notes/.test(d))) problems.push(`scans the table: ${where}`)
            if (details.some(d => /TEMP B-TREE/.test(d))) problems.push(`sorts: ${where}`)
            // a page's keys and revisions come from the index alone
            if (/^SELECT rowid, revision FROM/.test(sql) && !details.some(d => d.startsWith('SEARCH notes USING COVERING INDEX'))) problems.push(`reads the table for a page's keys: ${where}`)
            // the page's rows, once their keys are known: one lookup by rowid each
            if (/WHERE rowid IN/.test(sql)) {
              if (!details.some(d => d === 'SEARCH notes USING INTEGER PRIMARY KEY (rowid=?)')) problems.push(`looks rows up other than by rowid: ${where}`)
              continue
            }
            const index = /USING (?:COVERING )?INDEX (\w+)/.exec(details.join(' '))?.[1]
            const wanted = /changed_within/.test(sql) ? 'notes_changed_later' : INDEX_FOR[equalityFilters(f)]
            // a count may use any index whose prefix is the filters: it reads the same range
            if (/^SELECT count/.test(sql)) {
              if (!index?.startsWith(wanted === 'notes_newest' ? 'notes_' : wanted!)) problems.push(`counts off ${index}: ${where}`)
            } else if (index !== wanted) problems.push(`uses ${index}, not ${wanted}: ${where}`)
          }
        }
      }
      expect(problems).toEqual([])
    })
  }

  test('listFolders and the recent charges of getUsage', async () => {
    const plain = await newDatabase()
    const { db, seen } = recording(plain)
    const folders = createFoldersRepo(new SqliteStore(db))
    const usage = createCreditsRepo(new SqliteStore(db))
    await folders.list(LIB)
    await usage.recentCharges(ACCOUNT, 50)
    const plans = seen.filter(s => /^SELECT \* FROM (folders|usage)/.test(s.sql)).map(s => plan(plain, s.sql, s.params).join(' | '))
    expect(plans).toEqual([
      'SEARCH folders USING INDEX folders_by_name (account_id=? AND sandbox=?)',
      'SEARCH usage USING INDEX usage_recent (account_id=?)',
    ])
  })
})

describe.skipIf(backEnds.some(b => b.skip))('the same library lists the same bytes on SQLite and on PostgreSQL', () => {
  /** Text that JSON must escape, or that an escaper might: quotes, backslashes, control characters, non-ASCII. */
  const AWKWARD = ['say "hi"', 'back\\slash', 'line\nbreak\r\ttab', 'bell \u0007 unit \u001f del \u007f', 'é ü ß ✓ 😀', '</script> \u2028 \u2029', "it's", '']

  /** A library of every kind of field: awkward text, null and set optional fields, pinned, all statuses and types. */
  function library(): NoteRow[] {
    return generate(300, 31).map((m, i) => ({
      ...row(m),
      title: `${AWKWARD[i % AWKWARD.length]} ${i}`,
      summary: AWKWARD[(i * 3) % AWKWARD.length]!,
      processing_stage: m.status === 'Done' ? null : 'transcribing',
      language: i % 4 === 0 ? null : 'de',
      is_pinned: i % 5 === 0 ? 1 : 0,
      source: i % 2 ? 'api' : 'upload',
      style_id: AWKWARD[i % AWKWARD.length]!,
    }))
  }

  async function pages(b: (typeof backEnds)[number]): Promise<string[]> {
    const store = await seedLibrary(await b.open())
    try {
      const repo = notesRepoFor(store)
      await store.transaction(async () => {
        for (const r of library()) await repo.insert(r)
      })
      const clock = fixedClock(iso(NOW))
      const notes = createNotesService({ repo, clock, ids: createIdGenerator(() => clock.now().getTime()), store, folderExists: async () => true, revisions: createRevisionsRepo(store) })
      const out: string[] = []
      for (const f of filterCombinations()) {
        for (const [limit, offset] of [[50, 0], [7, 3], [100, 120], [20, 1000]] as const) {
          const q = { limit, offset, ...(f.folderId !== undefined ? { folderId: f.folderId ?? 'null' } : {}), ...(f.status ? { status: f.status } : {}), ...(f.type ? { type: f.type } : {}), ...(f.updatedAfter ? { updatedAfter: f.updatedAfter } : {}) }
          out.push(`${JSON.stringify(q)} ${await notes.listJson(LIB, q as never)}`)
        }
      }
      return out
    } finally {
      await store.close()
    }
  }

  test('every filter combination, at several limits and offsets, through the notes service', async () => {
    const [sqlite, postgres] = [await pages(backEnds[0]!), await pages(backEnds[1]!)]
    expect(sqlite.some(p => p.includes('\\u0007') && p.includes('😀') && p.includes('"isPinned":true'))).toBe(true)
    expect(postgres).toEqual(sqlite)
  }, 60_000)

  test('GET /v1/notes answers the same bytes', async () => {
    const texts: string[][] = []
    for (const b of backEnds) {
      const store = await b.open()
      try {
        const t = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
        const key = await t.key()
        const account = await t.services.accounts.ensureAccount('user@example.com')
        const repo = notesRepoFor(store)
        await store.transaction(async () => {
          for (const r of library()) await repo.insert({ ...r, account_id: account.id, folder_id: null })
        })
        const got: string[] = []
        for (const query of ['', 'limit=100', 'limit=13&offset=250', 'status=Error&type=video', 'folderId=null&limit=3', `updatedAfter=${iso(NOW - 30 * DAY)}&limit=100`]) {
          const res = await t.call('GET', `/v1/notes?${query}`, { token: key })
          expect(res.status).toBe(200)
          got.push(`${query} ${res.text}`)
        }
        texts.push(got)
      } finally {
        await store.close()
      }
    }
    expect(texts[1]).toEqual(texts[0]!)
  }, 60_000)
})

describe('the SQLite page cache', () => {
  test('keeps pages under the change stamp they were made at; a page made at an older stamp is not kept', () => {
    const cache = new PageCache(3)
    cache.set('7', 'a', 'page a at 7')
    expect(cache.get('7', 'a')).toBe('page a at 7')
    expect(cache.get('8', 'a')).toBeUndefined()
    cache.set('8', 'b', 'page b at 8')
    expect(cache.get('8', 'a')).toBeUndefined()
    cache.set('7', 'a', 'page a at 7, made by a reader a write overtook')
    expect(cache.get('7', 'a')).toBeUndefined()
    expect(cache.get('8', 'a')).toBeUndefined()
    expect(cache.get('8', 'b')).toBe('page b at 8')
    for (const k of ['c', 'd', 'e']) cache.set('8', k, k)
    expect(cache.get('8', 'e')).toBe('e')
  })

  test('gives a kept page as its UTF-8 bytes, made once and dropped with the page', async () => {
    const cache = new PageCache(3)
    cache.set('7', 'a', '{"title":"Überblick 🎙️"}')
    const body = cache.body('7', 'a')!
    expect(await body.text()).toBe('{"title":"Überblick 🎙️"}')
    expect(cache.body('7', 'a')).toBe(body)
    expect(cache.body('8', 'a')).toBeUndefined()
    cache.set('7', 'a', '{"title":"again"}')
    expect(await cache.body('7', 'a')!.text()).toBe('{"title":"again"}')
    cache.set('8', 'b', 'b')
    expect(cache.body('7', 'a')).toBeUndefined()
    expect(cache.body('8', 'a')).toBeUndefined()
  })
})
