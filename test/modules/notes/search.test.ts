import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openDatabase } from '../../../src/db/database'
import { migrateStore } from '../../../src/db/migrate-store'
import { MIGRATIONS } from '../../../src/db/migrations'
import { postgresMigrations } from '../../../src/db/migrations-postgres'
import { PostgresStore, SqliteStore, type SqlValue, type Store } from '../../../src/db/store'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds, sharedPostgres } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { seededRandom } from '../../fixtures/random'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

/**
 * GET /v1/notes?q=… on both back ends: what a user searching their library notices. Which notes are
 * found (every word, the last also as the start of a word, in title, summary or transcript), in what
 * order (a note about the word before one that mentions it), with what snippet (the match between
 * « and »), with the list's filters and pages; that any text typed is answered 200 or 400, never
 * 500; that the index follows every change of a note at once; and that no other library's notes are
 * ever found. Expected values are written here as data or computed by a reference over the
 * generated library, never taken from the code under test.
 */

/**
 * The snippet of a note titled `Repeated word` whose text repeats `delta`, on both back ends: the first
 * 16 words of the text, with … where it goes on (as FTS5's snippet(…, 16) made it).
 */
const REPEATED_WORD_SNIPPET = `${Array(16).fill('«delta»').join(' ')}…`
/** The same for a note titled `Long dictation` of different words (notea noteb …) after `opening remarks`, searched for both. */
const LONG_NOTE_SNIPPET = '«opening» «remarks» notea noteb notec noted notee notef noteg noteh notei notej notek notel notem noten…'

const NOTE_COLUMNS = ['id', 'account_id', 'sandbox', 'folder_id', 'title', 'summary', 'status', 'type', 'style_id', 'is_pinned', 'source', 'date_created', 'updated_at']

interface GeneratedNote {
  id: string
  account_id: string
  sandbox: number
  folder_id: string | null
  title: string
  summary: string
  transcript: string
  status: string
  type: string
  date_created: string
  updated_at: string
}

/** Inserts notes and their bodies in one transaction, in multi-row statements (the triggers index them). */
async function insertNotes(store: Store, notes: GeneratedNote[]): Promise<void> {
  await store.transaction(async () => {
    for (let i = 0; i < notes.length; i += 400) {
      const batch = notes.slice(i, i + 400)
      const values: SqlValue[] = []
      for (const n of batch) values.push(n.id, n.account_id, n.sandbox, n.folder_id, n.title, n.summary, n.status, n.type, 'note', 0, 'api', n.date_created, n.updated_at)
      await store.run(`INSERT INTO notes (${NOTE_COLUMNS.join(', ')}) VALUES ${batch.map(() => `(${NOTE_COLUMNS.map(() => '?').join(', ')})`).join(', ')}`, values)
      await store.run(`INSERT INTO note_bodies (note_id, original_transcription) VALUES ${batch.map(() => '(?, ?)').join(', ')}`, batch.flatMap(n => [n.id, n.transcript]))
    }
  })
}

/** No word here is the start of another, except where a test wants it (stone, storm: "sto"). */
const VOCABULARY = ['river', 'stone', 'storm', 'lantern', 'orchard', 'copper', 'meadow', 'harbor', 'violet', 'ember', 'glacier', 'willow',
  'falcon', 'canyon', 'prairie', 'thistle', 'quartz', 'saffron', 'tundra', 'juniper']
const FOLDERS = ['fld_search_a', 'fld_search_b']
const STATUSES = ['Done', 'Done', 'Error', 'Summarizing']
const TYPES = ['audio', 'video', 'import']
const LIBRARY_SIZE = 10_000
const T0 = Date.parse('2025-01-01T00:00:00.000Z')

/** The words of a generated note, for the reference: its text is only vocabulary words and spaces. */
const wordsOf = (n: GeneratedNote) => new Set(`${n.title} ${n.summary} ${n.transcript}`.split(' '))

/** What a search for `query` (words of the vocabulary) must find: every word, the last as a prefix. */
function reference(notes: GeneratedNote[], query: string[], keep: (n: GeneratedNote) => boolean = () => true): Set<string> {
  const last = query.at(-1)!
  return new Set(notes.filter(n => {
    if (!keep(n)) return false
    const words = wordsOf(n)
    return query.slice(0, -1).every(w => words.has(w)) && [...words].some(w => w.startsWith(last))
  }).map(n => n.id))
}

for (const b of backEnds) describe.skipIf(b.skip)(`searching notes on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const store = await open()
    const t = createTestApp({ clock, store })
    const token = await t.key()
    const create = async (title: string, content: string, extra: Record<string, unknown> = {}, as = token) => {
      clock.advance(1000)
      const r = await t.call('POST', '/v1/notes', { token: as, body: { title, content, ...extra } })
      expect(r.status).toBe(201)
      return r.body as { id: string }
    }
    const search = async (q: string, rest = '', as = token) => {
      const r = await t.call('GET', `/v1/notes?q=${encodeURIComponent(q)}${rest}`, { token: as })
      expect(r.status).toBe(200)
      return r.body as { data: { id: string; title: string; snippet: string }[]; pagination: { limit: number; offset: number; hasMore: boolean } }
    }
    const ids = async (q: string, rest = '', as = token) => (await search(q, rest, as)).data.map(n => n.id)
    return { ...t, clock, store, token, create, search, ids }
  }

  test('a note with the word in its title and several times in its text comes before one that mentions it once, whatever their age', async () => {
    const t = await setup()
    const about = await t.create('Budget review', 'The budget for next year. Budget lines were cut; the budget owner agreed.')
    await t.create('Weekly standup', 'Nothing about money here.')
    const mention = await t.create('Team offsite', 'We talked about the venue, the food, and briefly the budget.')
    const r = await t.search('budget')
    expect(r.data.map(n => n.id)).toEqual([about.id, mention.id])
    expect(r.pagination).toEqual({ limit: 50, offset: 0, hasMore: false })
    // each item is the list's item with its snippet, the match between the markers
    expect(Object.keys(r.data[0]!)).toEqual(['id', 'title', 'summary', 'status', 'processingStage', 'type', 'styleId', 'language', 'folderId', 'isPinned', 'source', 'dateCreated', 'updatedAt', 'tags', 'snippet'])
    expect(r.data[0]!.snippet).toContain('«Budget»')
    expect(r.data[1]!.snippet).toContain('the «budget»')
    expect(r.data[1]!.snippet).not.toContain('\n')
  })

  test.skipIf(b.name !== 'postgres')('PostgreSQL: a note titled with every word comes first, even before a note whose text holds many words starting with the last', async () => {
    const t = await setup()
    // on PostgreSQL ts_rank adds up every word the prefix matches: budgets, budgeted, budgeting, …
    // score this note above one with the word only in its title
    const many = await t.create('Weekly sync', Array(20).fill('budget budgets budgeted budgeting budgetary budgeteer budgetless budgeter').join(' '))
    const titled = await t.create('Budget', 'Nothing else said.')
    const older = await t.create('The budget', 'Lines were cut.')
    const both = await t.create('Budget and venue', 'The venue was chosen.')
    const r = await t.ids('budg')
    expect(r).toHaveLength(4)
    expect(r.at(-1)).toBe(many.id)
    expect(new Set(r.slice(0, 3))).toEqual(new Set([titled.id, older.id, both.id]))
    // every word in the title: the note titled with both first
    expect((await t.ids('venue budg'))[0]).toBe(both.id)
    // pages of 3 and 3: the titled notes, then the other, each once, in the same order
    const first = await t.search('budg', '&limit=3')
    const second = await t.search('budg', '&limit=3&offset=3')
    expect([...first.data, ...second.data].map(n => n.id)).toEqual(r)
  })

  test.skipIf(b.name !== 'postgres')('PostgreSQL: a page deep in the results (more than 1,000 notes kept) still has the notes titled with the words first, as the pages before it', async () => {
    const store = await open()
    const t = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const token = await t.key({ email: 'deep@example.com' })
    const account = (await store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['deep@example.com']))!.id
    const at = (i: number) => new Date(T0 + i * 60_000).toISOString()
    const note = (id: string, title: string, summary: string, transcript: string, i: number): GeneratedNote =>
      ({ id, account_id: account, sandbox: 0, folder_id: null, title, summary, transcript, status: 'Done', type: 'audio', date_created: at(i), updated_at: at(i) })
    // 1,000 older notes titled with the word, and 60 newer ones holding it only in their text, in many
    // forms (each form adds to ts_rank: ranked alone, these would come first)
    const forms = Array(20).fill('budget budgets budgeted budgeting budgetary budgeteer budgetless budgeter').join(' ')
    await insertNotes(store, [
      ...Array.from({ length: 1000 }, (_, i) => note(`note_titled${String(i).padStart(4, '0')}`, `Budget ${i}`, 'nothing else', 'nothing else', i)),
      ...Array.from({ length: 60 }, (_, i) => note(`note_forms${String(i).padStart(4, '0')}`, 'Weekly sync', 'budgets budgeted', forms, 2000 + i)),
    ])
    const page = async (offset: number, limit: number) => {
      const r = await t.call('GET', `/v1/notes?q=budg&limit=${limit}&offset=${offset}`, { token })
      expect(r.status).toBe(200)
      return (r.body.data as { id: string }[]).map(n => n.id)
    }
    // offset 980 + 40: 1,020 kept, past where a page is sorted in two steps; 960 + 40 keeps 1,000
    const deep = await page(980, 40)
    const shallow = await page(960, 40)
    expect(deep.slice(0, 20).every(id => id.startsWith('note_titled'))).toBe(true)
    expect(deep.slice(20).every(id => id.startsWith('note_forms'))).toBe(true)
    expect(deep.slice(0, 20)).toEqual(shallow.slice(20))
    expect((await page(1000, 60)).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `note_forms${String(i).padStart(4, '0')}`))
  })

  test('pages past the 1,000th result keep the order of equal matches: newest first, then by id, across the page boundaries, with notes made in the same second and at the same time', async () => {
    const store = await open()
    const t = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const token = await t.key({ email: 'ties@example.com' })
    const account = (await store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['ties@example.com']))!.id
    const note = (id: string, at: number): GeneratedNote =>
      ({ id, account_id: account, sandbox: 0, folder_id: null, title: 'Weekly sync', summary: 'nothing else', transcript: 'the harvest went well', status: 'Done', type: 'audio', date_created: new Date(at).toISOString(), updated_at: new Date(at).toISOString() })
    // every note the same text (the same score): 500 made at one instant, 400 within one second, 220
    // a minute apart, their ids not in the order they were made
    const id = (group: string, i: number) => `note_${group}${String((i * 37) % 1000).padStart(4, '0')}`
    const notes = [
      ...Array.from({ length: 500 }, (_, i) => note(id('same', i), T0 + 86_400_000)),
      ...Array.from({ length: 400 }, (_, i) => note(id('second', i), T0 + 2 * 86_400_000 + (i % 7) * 100)),
      ...Array.from({ length: 220 }, (_, i) => note(id('apart', i), T0 + (i % 2 ? 3 : -3) * 86_400_000 + i * 60_000)),
    ]
    await insertNotes(store, notes)
    // the interface's order for equal scores: newest first, then by id (descending, as the list)
    const expected = notes.map(n => [n.date_created, n.id] as const).sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? 1 : -1) : a[0] < b[0] ? 1 : -1)).map(([, id]) => id)
    const page = async (offset: number, limit: number, filters = '') => {
      const r = await t.call('GET', `/v1/notes?q=harvest&limit=${limit}&offset=${offset}${filters}`, { token })
      expect(r.status).toBe(200)
      return (r.body.data as { id: string }[]).map(n => n.id)
    }
    // in that order: 110 notes a minute apart, the 400 of one second, the 500 of one instant (511th to
    // 1,010th), 110 more a minute apart. Pages past the 1,000th kept that begin inside the instant's
    // run, end in it or after it, the last page cut short, and pages past the end.
    for (const [offset, limit] of [[990, 50], [1000, 1], [960, 100], [1050, 100], [1090, 100], [1120, 10]] as const)
      expect({ offset, ids: await page(offset, limit) }).toEqual({ offset, ids: expected.slice(offset, offset + limit) })
    // the same page with filters every note meets (each read in both steps of a deep page)
    expect(await page(990, 50, `&status=Done&type=audio&updatedAfter=${new Date(T0 - 4 * 86_400_000).toISOString()}`)).toEqual(expected.slice(990, 1040))
  })

  test('every word must occur, in any of title, summary or transcript; the last word also as the start of a word; case does not matter', async () => {
    const t = await setup()
    const both = await t.create('Harbor', 'The lantern by the water.')
    const one = await t.create('Harbor master', 'No light at all.')
    expect(await t.ids('harbor lantern')).toEqual([both.id])
    expect(await t.ids('HARBOR LANT')).toEqual([both.id])
    expect(new Set(await t.ids('harb'))).toEqual(new Set([both.id, one.id]))
    // only the last word is a prefix
    expect(await t.ids('harb lantern')).toEqual([])
    // the summary is searched too (a note made from text has its content as summary and transcript;
    // PATCH changes only the summary)
    await t.call('PATCH', `/v1/notes/${one.id}`, { token: t.token, body: { summary: 'quartz crystals' } })
    expect(await t.ids('quartz')).toEqual([one.id])
  })

  test('several words are weighed each on its own, not by how close they stand: equal notes come newest first', async () => {
    const t = await setup()
    // the same title and the same words in the same number, side by side in the older note, apart in the newer
    const together = await t.create('Meeting notes', 'harbor lantern quiet morning pier rope gull tide ferry bell')
    const apart = await t.create('Meeting notes', 'harbor quiet morning pier rope gull tide ferry bell lantern')
    expect(await t.ids('harbor lantern')).toEqual([apart.id, together.id])
    expect(await t.ids('lantern harbor')).toEqual([apart.id, together.id])
    // a word in the title still outweighs them both
    const titled = await t.create('Lantern repairs', 'harbor pier rope gull tide ferry bell quiet morning lantern')
    expect(await t.ids('harbor lantern')).toEqual([titled.id, apart.id, together.id])
  })

  test('among notes not titled with the word, the one saying it more often comes first, whatever its age; equal ones newest first', async () => {
    const t = await setup()
    const often = await t.create('Quarterly review', 'The budget. The budget again. And the budget once more.')
    const once = await t.create('Team offsite', 'We talked about the venue and briefly the budget.')
    const same = await t.create('Team offsite', 'We talked about the venue and briefly the budget.')
    expect(await t.ids('budget')).toEqual([often.id, same.id, once.id])
    // and so on every page
    const pages = [...(await t.ids('budget', '&limit=1')), ...(await t.ids('budget', '&limit=1&offset=1')), ...(await t.ids('budget', '&limit=1&offset=2'))]
    expect(pages).toEqual([often.id, same.id, once.id])
  })

  test('a search with filters follows a note at once: a new folder, its folder deleted, a status or type changed (by the API or another program)', async () => {
    const t = await setup()
    const folder = (await t.call('POST', '/v1/folders', { token: t.token, body: { name: 'Harbor' } })).body as { id: string }
    const note = await t.create('Lantern', 'the lantern by the water')
    const other = await t.create('Lantern two', 'another lantern')
    expect(await t.ids('lantern', `&folderId=${folder.id}`)).toEqual([])
    await t.call('PATCH', `/v1/notes/${note.id}`, { token: t.token, body: { folderId: folder.id } })
    expect(await t.ids('lantern', `&folderId=${folder.id}`)).toEqual([note.id])
    expect(await t.ids('lantern', '&folderId=null')).toEqual([other.id])
    expect(await t.ids('lantern', `&folderId=${folder.id}&status=Done&type=import`)).toEqual([note.id])
    // status and type as the pipeline or another program writes them
    await t.store.run("UPDATE notes SET status = 'Error', type = 'video' WHERE id = ?", [note.id])
    expect(await t.ids('lantern', `&folderId=${folder.id}&status=Done`)).toEqual([])
    expect(await t.ids('lantern', '&status=Error&type=video')).toEqual([note.id])
    expect(await t.ids('lantern', '&type=import')).toEqual([other.id])
    // the folder's deletion moves its notes to the top level
    expect((await t.call('DELETE', `/v1/folders/${folder.id}`, { token: t.token })).status).toBe(204)
    expect(new Set(await t.ids('lantern', '&folderId=null'))).toEqual(new Set([note.id, other.id]))
  })

  test('café is found by café in any case of its letters; a note of French quotes keeps its « » apart from the markers', async () => {
    const t = await setup()
    const fr = await t.create('Réunion au café', 'Il a dit « bonjour » au café du coin.')
    const r = await t.search('café')
    expect(r.data.map(n => n.id)).toEqual([fr.id])
    // the note's own guillemets show as single ones: every « » in a snippet is a marker
    const snippet = r.data[0]!.snippet
    expect(snippet).toContain('«café»')
    const marked = [...snippet.matchAll(/«([^«»]*)»/g)].map(m => m[1]!.toLowerCase())
    expect(marked.length).toBeGreaterThan(0)
    expect(marked.every(w => w === 'café')).toBe(true)
    const all = await t.search('bonjour')
    expect(all.data[0]!.snippet).toContain('‹ «bonjour» ›')
  })

  test('any text is a valid query: a table of hostile queries is answered 200 or 400, never 500, and a 400 names q', async () => {
    const t = await setup()
    await t.create('Budget "Q3" review', 'budget NEAR the AND OR title:x café 😀 - * ^ end')
    const hostile: [string, 200 | 400][] = [
      ['"', 200], ['""', 200], ['"budget', 200], ['budget"', 200], ['*', 200], ['budget*', 200], ['**', 200],
      ['NEAR(', 200], ['NEAR(budget review)', 200], ['NEAR(budget review, 2)', 200], ['-', 200], ['-budget', 200], ['budget -review', 200],
      ['AND OR', 200], ['AND', 200], ['OR', 200], ['NOT', 200], ['budget AND review', 200], ['budget NOT review', 200],
      ['title:x', 200], ['title:', 200], [':', 200], ['{title summary}:budget', 200], ['^', 200], ['^budget', 200], ['+', 200],
      ['(', 200], [')', 200], ['()', 200], ['[', 200], ['\\', 200], ["'", 200], ["'budget'", 200], ['%', 200], ['_', 200], [';', 200],
      ['&', 200], ['|', 200], ['!', 200], ['<->', 200], ['budget <-> review', 200], ['budget:*', 200], ["budget' & 'x", 200],
      ['😀', 200], ['👨‍👩‍👧‍👦 budget', 200], ['café', 200], ['Ünïcödé ñ', 200], ['e\u0301', 200], ['\u0301', 200], ['日本語の会議', 200],
      ['مرحبا', 200], ['\u200b', 200], ['\u0000', 400], ['budget\u0000review', 400], ['\uFFFD', 200], ['   ', 200], ['\t\n', 200],
      ['SELECT * FROM notes; --', 200], ["' OR 1=1 --", 200], ['a'.repeat(500), 200], ['a '.repeat(32).trim(), 200],
      ['a '.repeat(33).trim(), 400], ['x'.repeat(10_000), 400], ['budget '.repeat(2000), 400], ['', 400],
    ]
    const answers: [string, number][] = []
    for (const [q, _] of hostile) {
      const r = await t.call('GET', `/v1/notes?q=${encodeURIComponent(q)}`, { token: t.token })
      answers.push([q.slice(0, 40), r.status])
      if (r.status === 200) expect(Array.isArray(r.body.data)).toBe(true)
      if (r.status === 400) {
        expect(r.body.error.message).toMatch(/\bq\b/)
        expect(JSON.stringify(r.body.error)).not.toMatch(/fts5|syntax|tsquery|sqlite|postgres/i)
      }
    }
    expect(answers).toEqual(hostile.map(([q, status]) => [q.slice(0, 40), status]))
    // the operators were read as words
    expect((await t.search('budget AND review')).data).toHaveLength(1)
    expect((await t.search('"budget')).data).toHaveLength(1)
    expect((await t.search('title:x')).data).toHaveLength(1)
    // and the largest offset is a page past the end, as for the list
    expect(await t.search('budget', '&limit=100&offset=9007199254740991')).toEqual({ data: [], pagination: { limit: 100, offset: 9007199254740991, hasMore: false } })
  })

  test('the index follows every change at once: a deleted note is never found; a changed title or transcript is found by its new words and not its old ones', async () => {
    const t = await setup()
    const gone = await t.create('Glacier trip', 'We saw the glacier.')
    const kept = await t.create('Orchard visit', 'Apples and pears.')
    expect(await t.ids('glacier')).toEqual([gone.id])
    expect((await t.call('DELETE', `/v1/notes/${gone.id}`, { token: t.token })).status).toBe(204)
    expect(await t.ids('glacier')).toEqual([])

    await t.call('PATCH', `/v1/notes/${kept.id}`, { token: t.token, body: { title: 'Meadow walk' } })
    expect(await t.ids('orchard')).toEqual([])
    expect(await t.ids('meadow')).toEqual([kept.id])
    expect(await t.ids('pears')).toEqual([kept.id])

    // processing: the calls the pipeline makes, in its order (a pending note, its transcript, its summary)
    const lib = { accountId: (await t.store.get<{ account_id: string }>('SELECT account_id FROM notes WHERE id = ?', [kept.id]))!.account_id, sandbox: false }
    const pending = await t.services.notes.createPending(lib, { title: 'Recording.m4a', type: 'audio', styleId: 'meeting', language: null, source: 'upload', stage: 'queued' })
    expect(await t.ids('recording')).toEqual([pending.id])
    expect(await t.ids('thistle')).toEqual([])
    await t.services.notes.saveTranscript(pending.id, { transcript: 'the thistle grows by the canyon', language: 'en' })
    expect(await t.ids('thistle')).toEqual([pending.id])
    await t.services.notes.finish(pending.id, { title: 'Canyon flora', summary: 'Saffron and juniper.', transcript: 'the juniper grows by the canyon', structuredContent: null, language: 'en' })
    expect(await t.ids('thistle')).toEqual([])
    expect(await t.ids('recording')).toEqual([])
    expect(await t.ids('saffron')).toEqual([pending.id])
    expect(await t.ids('canyon juniper')).toEqual([pending.id])
  })

  test('a transcript too large for one index entry is still saved, and found by its words', async () => {
    const t = await setup()
    const lib = { accountId: (await t.store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['user@example.com']))!.id, sandbox: false }
    // 150,000 different words, 1.5 MB: more than one PostgreSQL tsvector holds (1 MB)
    const transcript = `opening remarks ${Array.from({ length: 150_000 }, (_, i) => `w${i.toString(36)}q`).join(' ')} closing`
    const pending = await t.services.notes.createPending(lib, { title: 'Long recording', type: 'audio', styleId: 'meeting', language: null, source: 'upload', stage: 'transcribing' })
    await t.services.notes.saveTranscript(pending.id, { transcript, language: 'en' })
    expect((await t.call('GET', `/v1/notes/${pending.id}/status`, { token: t.token })).body.processingStage).toBe('summarizing')
    expect(await t.ids('opening remarks')).toEqual([pending.id])
    expect(await t.ids('long recording')).toEqual([pending.id])
  }, 30_000)

  test('a note repeating one word 100,000 times (1,000,000 on SQLite) is found with a snippet of the usual length, made from the same few characters whatever the repeats', async () => {
    const t = await setup()
    // SQLite: the characters of note text the search hands the snippet code, per search (every value
    // of its rows but the list item, which is the note as the list shows it)
    const given: number[] = []
    if (b.name === 'sqlite') {
      const all = t.store.all.bind(t.store)
      t.store.all = (async (sql: string, params?: readonly SqlValue[]) => {
        const rows = await all<Record<string, unknown>>(sql, params)
        if (sql.includes('note_search')) given.push(rows.reduce((n, r) => n + Object.entries(r).reduce((m, [k, v]) => m + (k !== 'list_item' && typeof v === 'string' ? v.length : 0), 0), 0))
        return rows
      }) as Store['all']
    }
    for (const repeats of b.name === 'sqlite' ? [2_000, 100_000, 1_000_000] : [2_000, 100_000]) {
      // a text longer than createNote takes (2,000,000 characters) is written by the service, as the
      // pipeline writes a long transcript
      const text = 'delta '.repeat(repeats)
      const note = text.length <= 2_000_000
        ? await t.create('Repeated word', text)
        : await t.services.notes.create({ accountId: (await t.services.accounts.ensureAccount('user@example.com')).id, sandbox: false }, { title: 'Repeated word', content: text })
      const r = await t.search('delta')
      expect(r.data.map(n => n.id)).toEqual([note.id])
      expect({ repeats, snippet: r.data[0]!.snippet }).toEqual({ repeats, snippet: REPEATED_WORD_SNIPPET })
      expect((await t.call('DELETE', `/v1/notes/${note.id}`, { token: t.token })).status).toBe(204)
    }
    if (b.name === 'sqlite') {
      // the title whole (13 characters), and 401 of the summary and of the transcript, each time
      expect(given).toEqual([815, 815, 815])
    }
  }, 120_000)

  test('a note of about 1 MB of different words is created, found by its words, and given a snippet', async () => {
    const t = await setup()
    // note and the number in letters (a to z): notea noteb … notez noteba …
    const letters = (n: number): string => (n < 26 ? '' : letters(Math.floor(n / 26))) + String.fromCharCode(97 + (n % 26))
    const words = Array.from({ length: 120_000 }, (_, i) => `note${letters(i)}`)
    const content = `opening remarks ${words.join(' ')} closing`
    expect(content.length).toBeGreaterThan(1_000_000)
    const note = await t.create('Long dictation', content)
    const first = await t.search('opening remarks')
    expect(first.data.map(n => n.id)).toEqual([note.id])
    expect(first.data[0]!.snippet).toBe(LONG_NOTE_SNIPPET)
    // a prefix of 14,000 and more of its words: a rank far above any other, both found; on PostgreSQL the
    // note titled with it still first (the rank is capped below the place's titled bit)
    const prefixed = await t.create('Note on notes', 'notes')
    const byPrefix = await t.ids('note')
    expect([...byPrefix].sort()).toEqual([note.id, prefixed.id].sort())
    if (b.name === 'postgres') expect(byPrefix[0]).toBe(prefixed.id)
    if (b.name === 'sqlite') {
      // deep in the text (PostgreSQL indexes the first 100,000 characters of a text this large)
      const deep = words[100_000]!
      const r = await t.search(deep)
      expect(r.data.map(n => n.id)).toEqual([note.id])
      expect(r.data[0]!.snippet).toBe(`…${words.slice(99_993, 100_000).join(' ')} «${deep}» ${words.slice(100_001, 100_009).join(' ')}…`)
    }
  }, 60_000)

  test.skipIf(b.name !== 'sqlite')('a match far into a long transcript is shown marked, whatever its case and accents', async () => {
    const t = await setup()
    const filler = 'nothing much was said here '.repeat(200)
    const note = await t.create('Trip', `${filler}then the ÉCOLE and the Café, ${filler}`)
    const ecole = await t.search('ecole')
    expect(ecole.data.map(n => n.id)).toEqual([note.id])
    // no spelling of ecole occurs (SQLite's lower() leaves É): the transcript's first 10,000 characters are read
    expect(ecole.data[0]!.snippet).toBe('…nothing much was said here then the «ÉCOLE» and the Café, nothing much was said here…')
    // café occurs, capitalized: 400 characters around it are read, from inside a word (dropped)
    expect((await t.search('CAFÉ')).data[0]!.snippet).toBe('…said here then the ÉCOLE and the «Café», nothing much was said here nothing much was…')
  })

  test('a note the pipeline finishes (title, summary and status in one UPDATE) is found with status=Done at once, and no longer with its old status', async () => {
    const t = await setup()
    const lib = { accountId: (await t.store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['user@example.com']))!.id, sandbox: false }
    const pending = await t.services.notes.createPending(lib, { title: 'Recording.m4a', type: 'audio', styleId: 'meeting', language: null, source: 'upload', stage: 'queued' })
    await t.services.notes.saveTranscript(pending.id, { transcript: 'the thistle grows by the canyon', language: 'en' })
    expect(await t.ids('thistle', '&status=Summarizing')).toEqual([pending.id])
    expect(await t.ids('thistle', '&status=Done')).toEqual([])
    // finish() writes the title, summary, status and the rest of the notes row in one UPDATE (repo.write)
    await t.services.notes.finish(pending.id, { title: 'Canyon flora', summary: 'Saffron and juniper.', structuredContent: null, language: 'en' })
    expect(await t.ids('saffron', '&status=Done')).toEqual([pending.id])
    expect(await t.ids('thistle', '&status=Done&type=audio&folderId=null')).toEqual([pending.id])
    expect(await t.ids('thistle', '&status=Summarizing')).toEqual([])
  })

  test('a write that rolls back leaves the index as it was', async () => {
    const t = await setup()
    const n = await t.create('Copper wire', 'conductive')
    await expect(t.store.transaction(async () => {
      await t.store.run('UPDATE notes SET title = ? WHERE id = ?', ['Violet flower', n.id])
      throw new Error('rolled back')
    })).rejects.toThrow('rolled back')
    expect(await t.ids('violet')).toEqual([])
    expect(await t.ids('copper')).toEqual([n.id])
  })

  test('another account\'s notes are never found, and live and sandbox libraries are apart, as in listing', async () => {
    const t = await setup()
    const other = await t.key({ email: 'other@example.com' })
    const sandbox = await t.key({ sandbox: true })
    const mine = await t.create('Falcon notes', 'falcon falcon')
    const theirs = await t.create('Falcon notes', 'falcon falcon falcon', {}, other)
    const play = await t.create('Falcon notes', 'falcon', {}, sandbox)
    expect(await t.ids('falcon')).toEqual([mine.id])
    expect(await t.ids('falcon', '', other)).toEqual([theirs.id])
    expect(await t.ids('falcon', '', sandbox)).toEqual([play.id])
    expect(await t.ids('falcon', `&folderId=null&status=Done&type=import`, other)).toEqual([theirs.id])
  })

  test('a plain list page kept in memory is never served for a search, nor a search for a list', async () => {
    const t = await setup()
    await t.create('Willow', 'willow tree')
    await t.create('Ember', 'ember glow')
    const list = await t.call('GET', '/v1/notes?limit=10', { token: t.token })
    expect(list.body.data).toHaveLength(2)
    const again = await t.call('GET', '/v1/notes?limit=10', { token: t.token })
    expect(again.text).toBe(list.text)
    const found = await t.search('ember', '&limit=10')
    expect(found.data.map(n => n.title)).toEqual(['Ember'])
    expect(found.data[0]!.snippet).toContain('«Ember»')
    const after = await t.call('GET', '/v1/notes?limit=10', { token: t.token })
    expect(after.text).toBe(list.text)
    expect(after.body.data[0].snippet).toBeUndefined()
  })

  test('the OpenAPI document declares q and snippet', async () => {
    const t = await setup()
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    const params = doc.paths['/v1/notes'].get.parameters.map((p: { name: string }) => p.name)
    expect(params).toContain('q')
    const item = JSON.stringify(doc.components?.schemas?.NoteListItem ?? doc)
    expect(item).toContain('snippet')
  })

  describe(`a generated library of ${LIBRARY_SIZE.toLocaleString('en')} notes`, () => {
    let store: Store
    let t: ReturnType<typeof createTestApp>
    let token: string
    let otherToken: string
    let notes: GeneratedNote[]

    beforeAll(async () => {
      store = await b.open()
      t = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
      token = await t.key({ email: 'library@example.com' })
      otherToken = await t.key({ email: 'neighbour@example.com' })
      const account = (await store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['library@example.com']))!.id
      const neighbour = (await store.get<{ id: string }>('SELECT id FROM accounts WHERE email = ?', ['neighbour@example.com']))!.id
      for (const f of FOLDERS) await store.run('INSERT INTO folders (id, account_id, sandbox, name, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?)', [f, account, f, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'])
      const rand = seededRandom(13)
      const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!
      // word i is drawn with weight 1/(i+1): a few words are common, most are rare
      const weights = VOCABULARY.map((_, i) => 1 / (i + 1))
      const total = weights.reduce((a, w) => a + w, 0)
      const word = () => {
        let x = rand() * total
        for (let i = 0; i < VOCABULARY.length; i++) if ((x -= weights[i]!) < 0) return VOCABULARY[i]!
        return VOCABULARY.at(-1)!
      }
      const text = (n: number) => Array.from({ length: n }, word).join(' ')
      notes = Array.from({ length: LIBRARY_SIZE + 300 }, (_, i) => {
        const created = T0 + i * 60_000 + Math.floor(rand() * 30_000)
        const neighbourNote = i >= LIBRARY_SIZE
        return {
          id: `note_gen${String(i).padStart(6, '0')}`,
          account_id: neighbourNote ? neighbour : account,
          sandbox: 0,
          folder_id: neighbourNote ? null : rand() < 0.5 ? pick(FOLDERS) : null,
          title: text(2),
          summary: text(3),
          transcript: text(8),
          status: pick(STATUSES),
          type: pick(TYPES),
          date_created: new Date(created).toISOString(),
          updated_at: new Date(created + (rand() < 0.3 ? Math.floor(rand() * 400 * 86_400_000) : 0)).toISOString(),
        }
      })
      await insertNotes(store, notes)
    }, 60_000)
    afterAll(() => store?.close())

    const mine = () => notes.slice(0, LIBRARY_SIZE)

    async function allPages(query: string, rest: string, limit: number, as = token): Promise<string[]> {
      const found: string[] = []
      for (let offset = 0; ; offset += limit) {
        const r = await t.call('GET', `/v1/notes?q=${encodeURIComponent(query)}${rest}&limit=${limit}&offset=${offset}`, { token: as })
        expect(r.status).toBe(200)
        expect(r.body.pagination).toEqual({ limit, offset, hasMore: r.body.pagination.hasMore })
        found.push(...r.body.data.map((n: { id: string }) => n.id))
        if (!r.body.pagination.hasMore) {
          expect(r.body.data.length).toBeLessThanOrEqual(limit)
          return found
        }
        expect(r.body.data).toHaveLength(limit)
      }
    }

    test('paging through the results finds every matching note exactly once, and no other', async () => {
      const query = ['juniper', 'sto']
      const expected = reference(mine(), query)
      expect(expected.size).toBeGreaterThan(100)
      expect(expected.size).toBeLessThan(2000)
      const found = await allPages(query.join(' '), '', 97)
      expect(found.length).toBe(new Set(found).size)
      expect(new Set(found)).toEqual(expected)
    })

    test('pages deep in a word\'s results (past the 1,000th) go on in the order of the first ones: every note once, and pages that overlap agree', async () => {
      const expected = reference(mine(), ['juniper'])
      expect(expected.size).toBeGreaterThan(1200)
      const found = await allPages('juniper', '', 100)
      expect(found.length).toBe(new Set(found).size)
      expect(new Set(found)).toEqual(expected)
      // rows 900 to 949 from a page ending before the 1,000th and from one reaching it
      const ids = async (offset: number) =>
        (await t.call('GET', `/v1/notes?q=juniper&limit=100&offset=${offset}`, { token })).body.data.map((n: { id: string }) => n.id)
      const shallow = await ids(850)
      const deep = await ids(900)
      expect(deep.slice(0, 50)).toEqual(shallow.slice(50))
      expect(shallow).toEqual(found.slice(850, 950))
      expect(deep).toEqual(found.slice(900, 1000))
    }, 60_000)

    test('q combined with folder, status, type and updatedAfter finds exactly the notes meeting all of them', async () => {
      const after = new Date(T0 + 3000 * 60_000).toISOString()
      const cases: [string, (n: GeneratedNote) => boolean][] = [
        [`&folderId=${FOLDERS[0]}`, n => n.folder_id === FOLDERS[0]],
        ['&folderId=null', n => n.folder_id === null],
        ['&status=Error', n => n.status === 'Error'],
        ['&type=video&status=Done', n => n.type === 'video' && n.status === 'Done'],
        [`&folderId=${FOLDERS[1]}&status=Summarizing&type=audio`, n => n.folder_id === FOLDERS[1] && n.status === 'Summarizing' && n.type === 'audio'],
        [`&updatedAfter=${after}`, n => n.updated_at > after],
        [`&updatedAfter=${after}&type=import`, n => n.updated_at > after && n.type === 'import'],
      ]
      for (const [rest, keep] of cases) {
        const expected = reference(mine(), ['storm'], keep)
        expect({ rest, size: expected.size > 0 }).toEqual({ rest, size: true })
        const found = await allPages('storm', rest, 100)
        expect({ rest, found: found.length }).toEqual({ rest, found: new Set(found).size })
        expect({ rest, found: new Set(found) }).toEqual({ rest, found: expected })
      }
    }, 30_000)

    test('a page is in relevance order: every note with the word in its title before any without, within the filters', async () => {
      const filters = `&folderId=${FOLDERS[0]}&status=Error&type=video`
      const keep = (n: GeneratedNote) => n.folder_id === FOLDERS[0] && n.status === 'Error' && n.type === 'video'
      const r = await t.call('GET', `/v1/notes?q=glacier${filters}&limit=100`, { token })
      expect(new Set(r.body.data.map((n: { id: string }) => n.id))).toEqual(reference(mine(), ['glacier'], keep))
      const byId = new Map(notes.map(n => [n.id, n]))
      const inTitle = r.body.data.map((n: { id: string }) => byId.get(n.id)!.title.split(' ').includes('glacier'))
      const titled = mine().filter(n => keep(n) && n.title.split(' ').includes('glacier')).length
      expect(titled).toBeGreaterThan(3)
      expect(inTitle).toEqual([...Array(titled).fill(true), ...Array(inTitle.length - titled).fill(false)])
      for (const n of r.body.data) expect(n.snippet.toLowerCase()).toContain('«glacier»')
    })

    test('the neighbour finds only their own notes, and the library\'s owner none of theirs', async () => {
      const theirs = new Set(notes.slice(LIBRARY_SIZE).map(n => n.id))
      const found = await allPages('river', '', 100, otherToken)
      expect(new Set(found)).toEqual(reference(notes.slice(LIBRARY_SIZE), ['river']))
      const first = await t.call('GET', '/v1/notes?q=river&limit=100', { token })
      expect(first.body.data.some((n: { id: string }) => theirs.has(n.id))).toBe(false)
    })
  })
})

/** The ids a search of `q` finds, as the account old@example.com (made by the migration tests). */
const findOn = async (store: Store, q: string) => {
  // list items (search results are list items) carry the note's tags, a column of migration 28: on
  // SQLite it alone is added, which changes nothing the search indexes (a schema already past it, as
  // SQLite's at migration 30, has it); PostgreSQL's search reads the title's own index (migration 31),
  // filled for the notes already there: it is migrated to the end. The key made below is a workspace's
  // (made_by, migration 32 on SQLite too), which changes nothing the search indexes
  const at = Number((await store.get<{ v: number | string | null }>('SELECT max(version) AS v FROM schema_migrations'))?.v ?? 0)
  if (store.sql.name === 'postgres') await migrateStore(store, postgresMigrations())
  else await migrateStore(store, MIGRATIONS.filter(m => (at < 28 && m.version === 28) || m.version === 32))
  const t = createTestApp({ store })
  // the schema here is that of migration 9 or 12, older than the audit log (15): making the key
  // would record its event in a table that is not there yet
  t.services.audit.recordBy = t.services.audit.record = async () => {}
  const token = await t.key({ email: 'old@example.com' })
  return (await t.call('GET', `/v1/notes?q=${q}`, { token })).body.data.map((n: { id: string }) => n.id)
}

describe.skipIf(backEnds[1]!.skip)('migration 12 on PostgreSQL', () => {
  test('a search row of 6 KB is kept whole in its table page, those written before included, and still found', async () => {
    const { pg } = await sharedPostgres()
    const store = new PostgresStore(await pg.createDatabase(`search_rows_${process.pid}`), { max: 2 })
    const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${(i * 7919) % 1000}`).join(' ')
    const note = (id: string) => ({ id, account_id: 'acct_old', sandbox: 0, folder_id: null, title: `Tundra ${id}`, summary: words(40, 'sum'), transcript: `the saffron tent ${words(350, 'word')}`, status: 'Done', type: 'audio', date_created: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z' })
    // values of note_search kept out of its rows, in its TOAST table
    const movedOut = async () => {
      const toast = (await store.get<{ t: string }>("SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE relname = 'note_search'"))!.t
      return Number((await store.get<{ n: string }>(`SELECT count(*) AS n FROM ${toast}`))!.n)
    }
    try {
      await migrateStore(store, postgresMigrations().filter(m => m.version < 12))
      await store.run('INSERT INTO accounts (id, email, grant_period, created_at) VALUES (?, ?, ?, ?)', ['acct_old', 'old@example.com', '2026-11', '2026-11-01T00:00:00.000Z'])
      await insertNotes(store, [note('note_before')])
      const size = Number((await store.get<{ n: number }>('SELECT pg_column_size(doc) AS n FROM note_search'))!.n)
      expect(size).toBeGreaterThan(5_000)
      expect(size).toBeLessThan(8_000)
      expect(await movedOut()).toBeGreaterThan(0) // before: the row was cut to fit 2 KB
      expect(await migrateStore(store, postgresMigrations().filter(m => m.version <= 12))).toBe(1)
      expect(await movedOut()).toBe(0)
      await insertNotes(store, [note('note_after')])
      expect(await movedOut()).toBe(0)
      expect((await findOn(store, 'saffron')).sort()).toEqual(['note_after', 'note_before'])
      expect((await findOn(store, 'tundra')).sort()).toEqual(['note_after', 'note_before'])
      // the note's folder, status and type were copied into its search row by the migration
      expect((await findOn(store, 'tundra&status=Done&type=audio&folderId=null')).sort()).toEqual(['note_after', 'note_before'])
      expect(await findOn(store, 'tundra&type=video')).toEqual([])
    } finally {
      await store.close()
    }
  })
})

describe('migration 9 indexes the notes a database already has', () => {
  const insertOld = async (store: Store) => {
    await store.run('INSERT INTO accounts (id, email, grant_period, created_at) VALUES (?, ?, ?, ?)', ['acct_old', 'old@example.com', '2026-11', '2026-11-01T00:00:00.000Z'])
    await insertNotes(store, [{ id: 'note_old', account_id: 'acct_old', sandbox: 0, folder_id: null, title: 'Tundra expedition', summary: 'cold', transcript: 'the saffron tent', status: 'Done', type: 'audio', date_created: '2026-11-01T00:00:00.000Z', updated_at: '2026-11-01T00:00:00.000Z' }])
  }

  test('on SQLite, whose search rows migration 30 then copies for them', async () => {
    const db = openDatabase(':memory:', MIGRATIONS.filter(m => m.version < 9))
    const store = new SqliteStore(db)
    await insertOld(store)
    expect(await migrateStore(store, MIGRATIONS.filter(m => m.version <= 9))).toBe(1)
    // SQLite's search reads each match's library and order from search_keys (migration 30)
    await migrateStore(store, MIGRATIONS.filter(m => m.version <= 30))
    expect(await findOn(store, 'tundra')).toEqual(['note_old'])
    expect(await findOn(store, 'saffron')).toEqual(['note_old'])
    await store.close()
  })

  test.skipIf(backEnds[1]!.skip)('on PostgreSQL', async () => {
    const { pg } = await sharedPostgres()
    const store = new PostgresStore(await pg.createDatabase(`search_migration_${process.pid}`), { max: 2 })
    try {
      await migrateStore(store, postgresMigrations().filter(m => m.version < 9))
      await insertOld(store)
      expect(await migrateStore(store, postgresMigrations().filter(m => m.version <= 9))).toBe(1)
      expect(await findOn(store, 'tundra')).toEqual(['note_old'])
      expect(await findOn(store, 'saffron')).toEqual(['note_old'])
    } finally {
      await store.close()
    }
  })
})

/**
 * Makes each search statement on `store` take 40 ms, and records, as each starts, whose statements
 * (named by `whoOf` from its parameters) are under way together, such as "AB".
 */
function overlapsOf(store: SqliteStore, whoOf: (params?: readonly SqlValue[]) => string): string[] {
  const read = store.allAside.bind(store)
  const running: string[] = []
  const together: string[] = []
  store.allAside = (async (sql: string, params?: readonly SqlValue[]) => {
    const who = whoOf(params)
    running.push(who)
    together.push([...running].sort().join(''))
    await Bun.sleep(40)
    running.splice(running.indexOf(who), 1)
    return read(sql, params)
  }) as SqliteStore['allAside']
  return together
}

describe('searches of one account run one at a time', () => {
  test('three searches sent at once by one account run in turn; another account’s runs beside them', async () => {
    const t = createTestApp()
    const a = await t.key({ email: 'a@example.com' })
    const b = await t.key({ email: 'b@example.com' })
    const accountA = (await t.services.accounts.ensureAccount('a@example.com')).id
    for (const key of [a, b]) expect((await t.call('POST', '/v1/notes', { token: key, body: { title: 'budget', content: 'the budget for the year' } })).status).toBe(201)
    // each search statement takes 40 ms here; whose were under way together is recorded
    const together = overlapsOf(t.store as SqliteStore, params => (params?.includes(accountA) ? 'A' : 'B'))
    const search = (key: string) => t.call('GET', '/v1/notes?q=budget', { token: key })
    const answers = await Promise.all([search(a), search(a), search(a), search(b)])
    expect(answers.map(r => [r.status, r.body.data.length])).toEqual([[200, 1], [200, 1], [200, 1], [200, 1]])
    // what was under way as each statement started: never two of A's; B's beside one of A's
    expect(together.filter(g => g.includes('AA'))).toEqual([])
    expect(together.filter(g => g === 'AB').length).toBeGreaterThan(0)
    expect(together.length).toBe(4)
  })
})

describe('searches of one person in a workspace run one at a time (issue 35)', () => {
  test('two searches of one member run in turn; a teammate\'s, in the same workspace, runs beside them', async () => {
    const t = createTestApp()
    const team = await teamWorkspace(t, 'Searchers')
    const ann = await memberKey(t, team, (await person(t, 'ann@example.com')).id, 'editor')
    const ben = await memberKey(t, team, (await person(t, 'ben@example.com')).id, 'viewer')
    expect((await t.call('POST', '/v1/notes', { token: ann, body: { title: 'budget', content: 'the budget for the harbour' } })).status).toBe(201)
    // each search statement takes 40 ms here; whose were under way together is recorded (Ann searches
    // for budget, Ben for harbour: the statement's match text tells them apart, the workspace is one)
    const together = overlapsOf(t.store as SqliteStore, params => (params?.some(p => typeof p === 'string' && p.includes('harbour')) ? 'B' : 'A'))
    const answers = await Promise.all([
      t.call('GET', '/v1/notes?q=budget', { token: ann }), t.call('GET', '/v1/notes?q=budget', { token: ann }),
      t.call('GET', '/v1/notes?q=harbour', { token: ben }),
    ])
    expect(answers.map(r => [r.status, r.body.data.length])).toEqual([[200, 1], [200, 1], [200, 1]])
    expect(together.filter(g => g.includes('AA'))).toEqual([])
    expect(together.filter(g => g === 'AB').length).toBeGreaterThan(0)
    expect(together.length).toBe(3)
  })
})
