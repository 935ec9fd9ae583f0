import type { Database } from '../../db/database'
import type { SqliteStore } from '../../db/store'
import { untilNextCommit } from '../../db/wal-index'
import type { Library } from '../library'
import { filterKey, type NoteFilter } from './filter'
import { PageBoundaries, type OrderedSequence, type SortKey } from './page-boundaries'
import { PageCache } from './page-cache'
import { withTags } from './note-row'
import { CHANGED_WITHIN, createNotesRepo, equalities, LAST_CHANGE_CLASS, LIST_ORDER, taggedTerm, type ListCaches, type NotesListing, type SearchRow } from './repo'
import type { RevisionCache } from './revision-cache'
import { fts5Match, type SearchTerms } from './search-query'
import { anchorSpellings, BEFORE, SCAN, snippetOf, WINDOW } from './search-snippet'

/**
 * The notes repository on the embedded SQLite store. Listing is the tuned path of issue 9: every page
 * read off the index made for its filters (named with INDEXED BY), deep offsets sought from
 * remembered page boundaries, list items remembered by revision, whole pages kept until the notes
 * change. It runs bun:sqlite statements synchronously, inside one read transaction of the store
 * (which holds the connection: no other async context runs a statement meanwhile, and every statement
 * of a page sees the same library). Search is FTS5's.
 */

const ORDER = LIST_ORDER

/**
 * The index of each combination of equality filters (folder, status, type), in list order. Named in
 * the queries (SQLite's INDEXED BY): with a seek key and an updatedAfter range both on date_created,
 * the planner may otherwise prefer the plain date index and filter row by row.
 */
const LIST_INDEX: Record<string, string> = {
  '': 'notes_newest',
  f: 'notes_by_folder',
  s: 'notes_by_status',
  t: 'notes_by_type',
  fs: 'notes_by_folder_status',
  ft: 'notes_by_folder_type',
  st: 'notes_by_status_type',
  fst: 'notes_by_folder_status_type',
}
const AFTER = '(date_created, id) < ($after_created, $after_id)'

/**
 * The notes carrying the tag of name key $tag0, in list order, read as one range of
 * note_tags_in_list_order (its rows carry the note's date_created), as a folder's are of
 * notes_by_folder; named `notes`, with the columns the list's terms and keys read. SQLite flattens it
 * into the query around it, so the order comes from the index, with no sort.
 */
const TAGGED_RANGE = `(SELECT n.rowid AS rowid, n.revision AS revision, n.account_id AS account_id, n.sandbox AS sandbox,
    n.folder_id AS folder_id, n.status AS status, n.type AS type, nt.date_created AS date_created, nt.note_id AS id
  FROM note_tags nt INDEXED BY note_tags_in_list_order JOIN notes n ON n.id = nt.note_id
  WHERE nt.tag_id = (SELECT id FROM tags WHERE account_id = $account_id AND sandbox = $sandbox AND name_key = $tag0)) AS notes`

type Params = Record<string, string | number>

/**
 * A stamp that changes whenever any note is inserted, changed or deleted, by this process or another
 * (migration 5's counter, moved by triggers), and only then: what is derived from the notes alone
 * (page boundaries, list pages) outlives writes to other tables, such as a key's last use. Read it
 * only where the connection is held (inside a store transaction), like every statement of this file.
 */
export function notesChangeStamp(db: Database): () => string {
  const counter = db.query<[number], []>('SELECT n FROM note_revision_counter')
  return () => String(counter.values()[0]![0])
}

/** Where a row of a list page is: its rowid and revision, read off the index. */
interface ItemKey {
  rowid: number
  revision: number
}

/**
 * A page of list items (`count` of them from `offset`, as JSON strings) for a library and filters.
 * `items`: list items remembered by revision (null: always read them from the table, as with
 * NOTESVC_READ_CACHE=off).
 */
function sqliteLister(db: Database, boundaries: PageBoundaries, items: RevisionCache | null) {
  const readItems = db.query<ItemKey & { list_item: string; tags: string | null }, [string]>('SELECT rowid, revision, list_item, tags FROM notes WHERE rowid IN (SELECT value FROM json_each(?))')

  /**
   * The list items of the given rows, in their order: those remembered at the same revision from
   * memory, the others from the table by rowid (and remembered).
   */
  function listItems(keys: ItemKey[]): string[] {
    const out: (string | undefined)[] = keys.map(k => items?.get(k.rowid, k.revision))
    const missing = keys.filter((_, i) => out[i] === undefined)
    if (missing.length === 0) return out as string[]
    const read = new Map<number, string>()
    for (const r of readItems.all(JSON.stringify(missing.map(k => k.rowid)))) {
      const item = withTags(r.list_item, r.tags)
      read.set(r.rowid, item)
      items?.set(r.rowid, r.revision, item)
    }
    return keys.map((k, i) => out[i] ?? read.get(k.rowid)!)
  }

  /**
   * The equality filters of a list request as SQL terms and their parameters. `firstTagRead`: the
   * first tag asked for is the range read (TAGGED_RANGE), so only the others are terms.
   */
  function indexedEqualities(lib: Library, filter: NoteFilter, firstTagRead = false): { terms: string[]; params: Params; name: string; index: string } {
    const terms = ['account_id = $account_id', 'sandbox = $sandbox']
    const params: Params = { account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0 }
    if (filter.folderId === null) terms.push('folder_id IS NULL')
    else if (filter.folderId !== undefined) {
      terms.push('folder_id = $folder_id')
      params.folder_id = filter.folderId
    }
    if (filter.status !== undefined) {
      terms.push('status = $status')
      params.status = filter.status
    }
    if (filter.type !== undefined) {
      terms.push('type = $type')
      params.type = filter.type
    }
    // each tag asked for: the note carries it (note_tags' primary key, note first, then the tag's row)
    filter.tags?.forEach((key, i) => {
      if (i > 0 || !firstTagRead) terms.push(taggedTerm('notes.id', '$account_id', '$sandbox', `$tag${i}`))
      params[`tag${i}`] = key
    })
    const name = filterKey(lib, filter)
    const combination = `${filter.folderId !== undefined ? 'f' : ''}${filter.status !== undefined ? 's' : ''}${filter.type !== undefined ? 't' : ''}`
    return { terms, params, name, index: LIST_INDEX[combination]! }
  }

  const withAfter = (params: Params, after: SortKey | null): Params =>
    after ? { ...params, after_created: after.dateCreated, after_id: after.id } : params

  /**
   * The notes matching the equality filters (and, with updatedAfter T, created after T), in list
   * order: one range of one index, readable from any key onward. db.query caches each statement.
   */
  function createdSequence(lib: Library, filter: NoteFilter): OrderedSequence<string> {
    const tagged = (filter.tags?.length ?? 0) > 0
    const eq = indexedEqualities(lib, filter, tagged)
    const terms = [...eq.terms]
    const params = { ...eq.params }
    if (filter.updatedAfter !== undefined) {
      terms.push('date_created > $updated_after')
      params.updated_after = filter.updatedAfter
    }
    const from = tagged ? TAGGED_RANGE : `notes INDEXED BY ${eq.index}`
    const where = (after: SortKey | null) => (after ? [...terms, AFTER] : terms).join(' AND ')
    return {
      name: eq.name,
      keysEvery(after, step, count) {
        // the rows numbered in list order as the index gives them (no sort: the plan test checks it)
        return db.query<{ date_created: string; id: string }, Params>(`SELECT date_created, id FROM (SELECT date_created, id, row_number() OVER (${ORDER}) AS rn
          FROM ${from} WHERE ${where(after)} ${ORDER} LIMIT $n) WHERE rn % $step = 0`)
          .all({ ...withAfter(params, after), n: step * count, step }).map(r => ({ dateCreated: r.date_created, id: r.id }))
      },
      rows(after, skip, count) {
        return listItems(db.query<ItemKey, Params>(`SELECT rowid, revision FROM ${from} WHERE ${where(after)} ${ORDER} LIMIT $count OFFSET $skip`)
          .all({ ...withAfter(params, after), skip, count }))
      },
      countAfter(after, max) {
        return db.query<{ n: number }, Params>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${from} WHERE ${where(after)} LIMIT $max)`)
          .get({ ...withAfter(params, after), max })!.n
      },
    }
  }

  /**
   * With updatedAfter T, the notes created at or before T and changed after it, in list order. Each
   * `changed_within` class c is read off its index from T - bound(c) to T (a note of class c created
   * earlier cannot have changed after T), already in list order, and the classes are merged. The
   * merge is itself an ordered sequence: the rows after a key are the merge of each class's rows
   * after that key, so page boundaries apply to it as to any other, and a deep page reads at most
   * `step + count` rows of each class, whatever the offset.
   */
  function changedSequence(lib: Library, filter: NoteFilter): OrderedSequence<string> {
    const eq = indexedEqualities(lib, filter)
    const t = filter.updatedAfter!
    const tMs = Date.parse(t)
    const classes = Array.from({ length: LAST_CHANGE_CLASS }, (_, i) => {
      const c = i + 1
      const bound = CHANGED_WITHIN[c - 1]
      const terms = [...eq.terms, 'changed_within > 0', `changed_within = ${c}`, 'date_created <= $t', 'updated_at > $t']
      const params: Params = { ...eq.params, t }
      if (bound !== undefined) {
        terms.push('date_created >= $from')
        params.from = new Date(tMs - bound * 1000).toISOString()
      }
      return { terms, params }
    })
    type Key = ItemKey & { date_created: string; id: string }
    /** The keys of the first `want` rows after `after`, merged across the classes (no list item is read here). */
    const merged = (after: SortKey | null, want: number): Key[] => {
      const keys: Key[] = []
      for (const { terms, params } of classes) {
        const where = (after ? [...terms, AFTER] : terms).join(' AND ')
        keys.push(...db.query<Key, Params>(`SELECT date_created, id, rowid, revision FROM notes INDEXED BY notes_changed_later WHERE ${where} ${ORDER} LIMIT $want`)
          .all({ ...withAfter(params, after), want }))
      }
      keys.sort((a, b) => (a.date_created === b.date_created ? (a.id < b.id ? 1 : -1) : a.date_created < b.date_created ? 1 : -1))
      return keys.slice(0, want)
    }
    return {
      name: `${eq.name}\u0002changed`,
      keysEvery: (after, step, count) =>
        merged(after, step * count).filter((_, i) => (i + 1) % step === 0).map(k => ({ dateCreated: k.date_created, id: k.id })),
      rows: (after, skip, count) => listItems(merged(after, skip + count).slice(skip)),
      countAfter: (after, max) => merged(after, max).length,
    }
  }

  /**
   * `count` list items from position `offset`. The caller holds the connection in one read
   * transaction, so the page, the boundaries it seeks from and the count that joins the two parts of
   * an updatedAfter list all see the same library.
   */
  return function list(lib: Library, filter: NoteFilter, count: number, offset: number): string[] {
    const created = createdSequence(lib, filter)
    const rows = boundaries.page(created, offset, count)
    if (filter.updatedAfter === undefined || rows.length === count) return rows
    // updatedAfter T: the notes created after T (all of them changed after T, as a note is never
    // updated before it was created), then, all older, those created before T and changed since.
    const createdAfter = rows.length > 0 ? offset + rows.length : boundaries.count(created)
    return rows.concat(boundaries.page(changedSequence(lib, filter), Math.max(0, offset - createdAfter), count - rows.length))
  }
}

/** Beyond any place in a column. */
const NOWHERE = 9e15

/** The first of several places (instr() results, 0 for none), or null. */
const earliest = (places: string[]) =>
  places.length === 1 ? `nullif(${places[0]}, 0)` : `nullif(min(${places.map(p => `coalesce(nullif(${p}, 0), ${NOWHERE})`).join(', ')}), ${NOWHERE})`

/**
 * Where the anchor word first occurs in a column, 1-based (null when it does not): the first place
 * one of its spellings starts a word (after a space, a line break or a tab, or at the start), else
 * the first place one occurs at all. Parameters: the spellings each after a space, then the
 * spellings. Each lower(), replace() and instr() is one pass over the column, so the cost is linear
 * in the column, as the match and bm25 already are.
 */
const firstPlace = (column: string, spellings: number) => `coalesce(
    ${earliest(Array<string>(spellings).fill(`instr(' ' || replace(replace(lower(${column}), char(10), ' '), char(9), ' '), ?)`))},
    ${earliest(Array<string>(spellings).fill(`instr(lower(${column}), ?)`))})`

/**
 * A column's window: WINDOW characters around the anchor word, or SCAN from the start where it does
 * not occur, and one more character, telling that the column goes on.
 */
const windowOf = (i: number, column: string) => `CASE WHEN a.p${i} IS NULL THEN 1 ELSE max(1, a.p${i} - ${BEFORE}) END AS from${i},
    CASE WHEN a.p${i} IS NULL THEN substr(${column}, 1, ${SCAN + 1}) ELSE substr(${column}, max(1, a.p${i} - ${BEFORE}), ${WINDOW + 1}) END AS text${i},
    CASE WHEN a.p${i} IS NULL THEN ${SCAN} ELSE ${WINDOW} END AS size${i}`

/** A result's list item and the windows of its title (0), summary (1) and transcript (2). */
interface SearchWindows {
  list_item: string
  tags: string | null
  from0: number
  text0: string
  size0: number
  from1: number
  text1: string
  size1: number
  from2: number
  text2: string
  size2: number
}

/**
 * A page of search results. bm25 with the title ten times and the summary twice as heavy as the
 * transcript (lower is better); its cost is linear in the matches of each row. The page's keys are
 * found first; then, for its rows only, where the anchor word first occurs in each column of the
 * index's copy of the text (so with the note's own « » as ‹ ›); then the windows around those
 * places (a bounded number of characters each), from which search-snippet.ts makes the snippet.
 * Not FTS5's snippet(): it scans every phrase instance of the column once for each phrase instance,
 * so a note repeating a word 20,000 times held the request thread for 12 s (issue 22;
 * bench/search-repeats.ts).
 */
async function searchRows(store: SqliteStore, lib: Library, filter: NoteFilter, terms: SearchTerms, count: number, offset: number): Promise<SearchRow[]> {
  // the library, order and filters from the narrow search rows (migration 30), not from notes' wide
  // rows: only updatedAfter reads notes, for the matches
  const eq = equalities(lib, filter, 'k.')
  const after = filter.updatedAfter === undefined ? '' : ' JOIN notes n ON n.rowid = s.rowid AND n.updated_at > ?'
  const afterParams = filter.updatedAfter === undefined ? [] : [filter.updatedAfter]
  const spellings = anchorSpellings(terms)
  const anchorParams = [...spellings.map(w => ` ${w}`), ...spellings]
  const columns = ['s.title', 's.summary', 's.transcript']
  // on the store's read thread: the cost of bm25 and of finding the windows grows with the matching text
  const rows = await store.allAside<SearchWindows>(`WITH page AS (
      SELECT s.rowid AS r, bm25(note_search, 10.0, 2.0, 1.0) AS score, k.date_created, k.id
      FROM note_search s JOIN search_keys k ON k.note_rowid = s.rowid${after}
      WHERE note_search MATCH ? AND ${eq.where}
      ORDER BY score, k.date_created DESC, k.id DESC LIMIT ? OFFSET ?),
    anchors AS MATERIALIZED (
      SELECT page.*, ${columns.map((c, i) => `${firstPlace(c, spellings.length)} AS p${i}`).join(', ')}
      FROM page JOIN note_search s ON s.rowid = page.r)
    SELECT n.list_item, n.tags, ${columns.map((c, i) => windowOf(i, c)).join(', ')}
    FROM anchors a JOIN note_search s ON s.rowid = a.r JOIN notes n ON n.rowid = a.r
    ORDER BY a.score, a.date_created DESC, a.id DESC`, [...afterParams, fts5Match(terms), ...eq.params, count, offset, ...columns.flatMap(() => anchorParams)])
  return rows.map(r => ({
    list_item: r.list_item,
    tags: r.tags,
    snippet: snippetOf([
      { from: r.from0, text: r.text0, size: r.size0 },
      { from: r.from1, text: r.text1, size: r.size1 },
      { from: r.from2, text: r.text2, size: r.size2 },
    ], terms),
  }))
}

/**
 * The notes repository on SQLite: list pages on the tuned path, run synchronously inside one read
 * transaction of the store; with `pages`, a page's text is kept until a note changes: a request whose
 * stamp (read through the store, one statement) matches a kept page's is answered from memory;
 * otherwise the page is made in a read transaction and kept under the stamp read in that same
 * transaction.
 */
export function createSqliteNotesRepo(store: SqliteStore, caches: ListCaches = {}) {
  const db = store.db
  const stamp = notesChangeStamp(db)
  const list = sqliteLister(db, caches.boundaries ?? new PageBoundaries(stamp), caches.items ?? null)
  const pageCache = caches.pages ? new PageCache() : null
  const pageKey = (lib: Library, filter: NoteFilter, count: number, offset: number) => `${filterKey(lib, filter)}\u0002${count}\u0002${offset}`
  /**
   * The notes' revision counter read at once, remembered until the next commit to the database by any
   * connection of any process (db/wal-index.ts): a repeated request reads no statement while nothing
   * was committed.
   */
  const counterNow = untilNextCommit(db, () => store.getNow<{ n: number }>('SELECT n FROM note_revision_counter')?.n)
  /** The stamp a kept page is looked up under when it can be told at once, else undefined. */
  const keptStamp = (): string | undefined => {
    // only while the connection is free, as `page`'s read would run at once
    if (!pageCache || !store.free) return undefined
    const n = counterNow()
    return n === undefined ? undefined : String(n)
  }
  const listing: NotesListing = {
    items: (lib, filter, count, offset) => store.transaction(async () => list(lib, filter, count, offset), 'read'),
    pageKey,
    kept(key) {
      const now = keptStamp()
      return now === undefined ? undefined : pageCache!.get(now, key)
    },
    keptBody(key) {
      const now = keptStamp()
      return now === undefined ? undefined : pageCache!.body(now, key)
    },
    async page(lib, filter, count, offset, render) {
      const cache = store.inTransaction ? null : pageCache
      const key = pageKey(lib, filter, count, offset)
      if (cache) {
        const kept = cache.get(String((await store.get<{ n: number }>('SELECT n FROM note_revision_counter'))!.n), key)
        if (kept !== undefined) return kept
      }
      return store.transaction(async () => {
        const page = render(list(lib, filter, count, offset))
        cache?.set(stamp(), key, page)
        return page
      }, 'read')
    },
    search: (lib, filter, terms, count, offset) => searchRows(store, lib, filter, terms, count, offset),
  }
  return createNotesRepo(store, listing)
}
