/**
 * Listing by tag is read as listing by folder is: one range of an index in list order
 * (note_tags_in_list_order), never a scan of the library or a sort, at any offset (SQLite's plans).
 */
import { expect, test } from 'bun:test'
import { openDatabase, type Database } from '../../../src/db/database'
import { SqliteStore } from '../../../src/db/store'
import { newNoteRow } from '../../../src/modules/notes/note-row'
import { PageBoundaries } from '../../../src/modules/notes/page-boundaries'
import { createSqliteNotesRepo, notesChangeStamp } from '../../../src/modules/notes/repo.sqlite'
import type { NoteFilter } from '../../../src/modules/notes/filter'
import { createTagsRepo } from '../../../src/modules/tags/repo'

const LIB = { accountId: 'acct_plan', sandbox: false }

/** Every statement run through `db.query`, with its parameters. */
function recording(db: Database) {
  const seen: { sql: string; params: unknown }[] = []
  const proxy = new Proxy(db as any, {
    get(target, prop) {
      if (prop !== 'query') return typeof target[prop] === 'function' ? target[prop].bind(target) : target[prop]
      return (sql: string) => {
        const st = target.query(sql)
        return new Proxy(st, { get: (s, p) => (['get', 'all', 'values'].includes(p as string) ? (...a: unknown[]) => (seen.push({ sql, params: a[0] }), s[p](...a)) : typeof s[p] === 'function' ? s[p].bind(s) : s[p]) })
      }
    },
  })
  return { db: proxy as Database, seen }
}

test('tag=, alone, twice, and with a folder or status: read off note_tags_in_list_order, no scan of notes, no sort', async () => {
  const plain = openDatabase(':memory:')
  const { db, seen } = recording(plain)
  const store = new SqliteStore(db)
  plain.query("INSERT INTO accounts (id, email, grant_period, created_at) VALUES ('acct_plan', 'plan@example.com', '2026-11', '2026-11-01T00:00:00.000Z')").run()
  plain.query("INSERT INTO folders (id, account_id, sandbox, name, created_at, updated_at) VALUES ('fld_a', 'acct_plan', 0, 'A', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')").run()
  const notes = createSqliteNotesRepo(store, { boundaries: new PageBoundaries(notesChangeStamp(plain), 16) })
  const tags = createTagsRepo(store)
  for (const [id, key] of [['tag_alpha', 'alpha'], ['tag_beta', 'beta']]) {
    await tags.insert({ id: id!, account_id: LIB.accountId, sandbox: 0, name: key!, name_key: key!, color: '#000000', created_at: '2026-11-01T00:00:00.000Z' })
  }
  for (let i = 0; i < 3000; i++) {
    const id = `note_${String(i).padStart(5, '0')}`
    const at = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString()
    await notes.insert(newNoteRow(LIB, id, at, { title: `n${i}`, status: i % 7 ? 'Done' : 'Error', type: 'audio', style_id: 'note', source: 'api', folder_id: i % 5 ? null : 'fld_a' }))
    if (i % 3 === 0) await tags.attach(id, 'tag_alpha')
    if (i % 6 === 0) await tags.attach(id, 'tag_beta')
  }
  plain.exec('PRAGMA optimize=0x10002')
  const filters: NoteFilter[] = [{ tags: ['alpha'] }, { tags: ['alpha', 'beta'] }, { tags: ['alpha'], folderId: 'fld_a' }, { tags: ['beta'], status: 'Done' }]
  const problems: string[] = []
  let checked = 0
  for (const f of filters) {
    for (const offset of [0, 40, 450, 5000]) {
      seen.length = 0
      const page = await notes.listJson(LIB, f, 50, offset)
      if (offset === 0) expect(page.length).toBeGreaterThan(0)
      // the statements reading a page's keys, the boundaries and counts (not the items by rowid)
      for (const { sql, params } of seen.filter(s => !/WHERE rowid IN|note_revision_counter/.test(s.sql))) {
        checked++
        const details = (plain.query(`EXPLAIN QUERY PLAN ${sql}`).all(params as never) as { detail: string }[]).map(r => r.detail)
        const where = `${JSON.stringify(f)} offset ${offset}: ${details.join(' | ')}`
        if (details.some(d => /^SCAN (notes|n|nt)\b/.test(d))) problems.push(`scans: ${where}`)
        if (details.some(d => /TEMP B-TREE/.test(d))) problems.push(`sorts: ${where}`)
        if (!details.some(d => /INDEX note_tags_in_list_order \(tag_id=\?/.test(d))) problems.push(`not a range of the tag: ${where}`)
      }
    }
  }
  expect(problems).toEqual([])
  expect(checked).toBeGreaterThanOrEqual(filters.length * 4)
  // and the pages are the right notes: every third note, newest first
  const alpha = (await notes.listJson(LIB, { tags: ['alpha'] }, 50, 0)).map(s => JSON.parse(s).id)
  expect(alpha.slice(0, 3)).toEqual(['note_02997', 'note_02994', 'note_02991'])
  const both = (await notes.listJson(LIB, { tags: ['alpha', 'beta'] }, 50, 450)).map(s => JSON.parse(s).id)
  expect(both.slice(0, 2)).toEqual(['note_00294', 'note_00288'])
})
