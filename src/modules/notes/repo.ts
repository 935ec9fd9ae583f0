import { sqliteOf } from '../../db/open'
import { PageBoundaries } from '../../db/page-boundaries'
import type { RevisionCache } from '../../db/revision-cache'
import type { SqlValue, Store } from '../../db/store'
import type { Library } from '../library'
import { filterKey, type NoteFilter } from './filter'
import { fts5Match, tsqueryParams, tsqueryRankText, type SearchTerms } from './search-query'
import { CHANGED_WITHIN, LAST_CHANGE_CLASS, notesChangeStamp, PageCache, sqliteLister } from './sqlite-list'

export { filterKey, notesChangeStamp, type NoteFilter }

export interface NoteRow {
  id: string
  account_id: string
  sandbox: number
  folder_id: string | null
  title: string
  summary: string
  original_transcription: string
  structured_content: string | null
  /** the transcript's timed segments as JSON (with word times when the engine gives them); null when unknown (migration 11) */
  transcript_segments?: string | null
  status: 'Done' | 'Summarizing' | 'Error'
  processing_stage: string | null
  /** share of the recording transcribed, 0 to 1; null when unknown (migration 8) */
  progress?: number | null
  type: string
  style_id: string
  language: string | null
  is_pinned: number
  source: string
  error_code: string | null
  error_message: string | null
  date_created: string
  updated_at: string
}

const BODY_COLUMNS = ['original_transcription', 'structured_content', 'transcript_segments'] as const
type Writable = Partial<Omit<NoteRow, 'id' | 'account_id' | 'sandbox' | 'date_created'>>

export type NotesRepo = ReturnType<typeof createNotesRepo>

/**
 * What the SQLite list path remembers between requests (PostgreSQL, shared by several nodes, reads
 * every page from the database and remembers nothing). Each is forgotten, or checked, when the notes
 * change, by this process or another one.
 */
export interface ListCaches {
  /** the sort key at every n-th position of each list read (default: every 16th) */
  boundaries?: PageBoundaries
  /** list items remembered by revision (absent or null: always read them from the table) */
  items?: RevisionCache | null
  /** whole list pages, kept until a note is inserted, changed or deleted */
  pages?: boolean
}

const NOTE_COLUMNS = ['id', 'account_id', 'sandbox', 'folder_id', 'title', 'summary', 'status', 'processing_stage', 'type', 'style_id', 'language', 'is_pinned', 'source', 'error_code', 'error_message', 'date_created', 'updated_at'] as const
const WITH_BODY = `SELECT n.*, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
  FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id`
const ORDER = 'ORDER BY date_created DESC, id DESC'

/**
 * Notes on either back end. Listing differs: on SQLite, the tuned path of `sqlite-list.ts` (named
 * indexes, page boundaries, items remembered by revision, pages cached until the notes change), run
 * synchronously inside one read transaction of the store; on PostgreSQL, one plain query reading the
 * stored `list_item` column in list order. Both give the same bytes for the same library.
 */
export function createNotesRepo(store: Store, caches: ListCaches = {}) {
  const db = sqliteOf(store)
  const sqliteList = db ? sqliteLister(db, caches.boundaries ?? new PageBoundaries(notesChangeStamp(db)), caches.items ?? null) : null
  const stamp = db ? notesChangeStamp(db) : null
  const pageCache = caches.pages ? new PageCache() : null
  const postgres = store.dialect === 'postgres'
  /** `max` of two values, as each dialect spells it */
  const greatest = postgres ? 'GREATEST' : 'max'
  const sandbox = (lib: Library) => (lib.sandbox ? 1 : 0)

  /** The equality filters of a list request as SQL terms (`?` placeholders) and their values. */
  function equalities(lib: Library, filter: NoteFilter): { where: string; params: SqlValue[] } {
    const terms = ['account_id = ?', 'sandbox = ?']
    const params: SqlValue[] = [lib.accountId, sandbox(lib)]
    if (filter.folderId === null) terms.push('folder_id IS NULL')
    else if (filter.folderId !== undefined) {
      terms.push('folder_id = ?')
      params.push(filter.folderId)
    }
    if (filter.status !== undefined) {
      terms.push('status = ?')
      params.push(filter.status)
    }
    if (filter.type !== undefined) {
      terms.push('type = ?')
      params.push(filter.type)
    }
    return { where: terms.join(' AND '), params }
  }

  /**
   * PostgreSQL: `count` list items from `offset`, one query. The page's keys are read off the list
   * index of the filters alone (an index-only scan, so the rows an offset skips cost an index entry
   * each, not a table read), then only the page's rows are read for their `list_item`. With
   * updatedAfter T the keys are, as on SQLite, the notes created after T (a range of that index:
   * every one of them changed after T, as a note is never updated before it was created), then, all
   * older, those created at or before T and changed since, found through the partial index of notes
   * that changed after their creation (a note of `changed_within` class c created before
   * T - bound(c) cannot have changed after T); each part gives at most `offset + count` keys.
   */
  async function postgresList(lib: Library, filter: NoteFilter, count: number, offset: number): Promise<string[]> {
    return (await postgresPage(lib, filter, count, offset)).items
  }

  /**
   * The same, with the revision counter (migration 5's, moved at the commit of any change to a note)
   * read by the same statement, so in the same snapshot: the stamp a kept page is valid for.
   */
  async function postgresPage(lib: Library, filter: NoteFilter, count: number, offset: number): Promise<{ items: string[]; stamp: string | null }> {
    const eq = equalities(lib, filter)
    let keys: string
    let params: SqlValue[]
    if (filter.updatedAfter === undefined) {
      keys = `SELECT date_created, id FROM notes WHERE ${eq.where} ${ORDER} LIMIT ? OFFSET ?`
      params = [...eq.params, count, offset]
    } else {
      const t = filter.updatedAfter
      const tMs = Date.parse(t)
      const from = CHANGED_WITHIN.map(bound => new Date(tMs - bound * 1000).toISOString())
      const classes = `(changed_within = ${LAST_CHANGE_CLASS}${from.map((_, i) => ` OR (changed_within = ${i + 1} AND date_created >= ?)`).join('')})`
      const want = offset + count
      keys = `SELECT date_created, id FROM (
          (SELECT date_created, id FROM notes WHERE ${eq.where} AND date_created > ? ${ORDER} LIMIT ?)
          UNION ALL
          (SELECT date_created, id FROM notes WHERE ${eq.where} AND changed_within > 0 AND date_created <= ? AND updated_at > ? AND ${classes} ${ORDER} LIMIT ?)
        ) parts ${ORDER} LIMIT ? OFFSET ?`
      params = [...eq.params, t, want, ...eq.params, t, t, ...from, want, count, offset]
    }
    const rows = await store.all<{ list_item: string | null; stamp: string | number }>(`WITH counter AS (SELECT n AS stamp FROM note_revision_counter)
      SELECT n.list_item, counter.stamp FROM counter LEFT JOIN ((${keys}) page JOIN notes n ON n.id = page.id) ON true
      ORDER BY page.date_created DESC, page.id DESC`, params)
    return { items: rows.filter(r => r.list_item !== null).map(r => r.list_item!), stamp: rows[0] ? String(rows[0].stamp) : null }
  }

  /**
   * `count` list items from `offset` as JSON strings. On SQLite in one read transaction of the store,
   * which holds the connection: the tuned path's statements run synchronously, and the page, the
   * boundaries it seeks from and the count joining the parts of an updatedAfter list see one library.
   */
  function items(lib: Library, filter: NoteFilter, count: number, offset: number): Promise<string[]> {
    if (!sqliteList) return postgresList(lib, filter, count, offset)
    return store.transaction(async () => sqliteList(lib, filter, count, offset), 'read')
  }

  /**
   * A page of search results (`count` from `offset`), most relevant first, ties newest first then by
   * id, so the order is total and offsets page through it without repeats or gaps while the library
   * stands still. The page's keys are found first; only its rows are given a snippet (making one reads
   * the note's text), in a second step of the same statement.
   */
  function searchRows(lib: Library, filter: NoteFilter, terms: SearchTerms, count: number, offset: number): Promise<{ list_item: string; snippet: string }[]> {
    const eq = equalities(lib, filter)
    const where = eq.where.replace(/\b(account_id|sandbox|folder_id|status|type)\b/g, 'n.$1')
    const after = filter.updatedAfter === undefined ? '' : ' AND n.updated_at > ?'
    const afterParams = filter.updatedAfter === undefined ? [] : [filter.updatedAfter]
    if (!postgres) {
      // bm25 with the title ten times and the summary twice as heavy as the transcript (lower is better)
      return store.all(`WITH page AS (
          SELECT s.rowid AS r, bm25(note_search, 10.0, 2.0, 1.0) AS score, n.date_created, n.id
          FROM note_search s JOIN notes n ON n.rowid = s.rowid
          WHERE note_search MATCH ? AND ${where}${after}
          ORDER BY score, n.date_created DESC, n.id DESC LIMIT ? OFFSET ?)
        SELECT n.list_item, snippet(note_search, -1, '«', '»', '…', 16) AS snippet
        FROM page JOIN note_search s ON s.rowid = page.r JOIN notes n ON n.rowid = page.r
        WHERE note_search MATCH ?
        ORDER BY page.score, page.date_created DESC, page.id DESC`, [fts5Match(terms), ...eq.params, ...afterParams, count, offset, fts5Match(terms)])
    }
    // ts_rank weighing title (A) ten times and summary (B) twice as heavy as the transcript (C), as
    // bm25 does on SQLite (higher is better; the array is D, C, B, A). Not ts_rank_cd: cover density
    // costs about twice as much per match, and every match of a common word is ranked
    // (bench/search.ts). ts_headline parses all the text it is given (about 0.2 ms per note for 1,500
    // characters), so a summary or transcript longer than 400 characters is cut to the 400 around
    // the first place the first word occurs (lower() folds ASCII only under the "C" collation: a
    // word found nowhere gives the first 400, and a snippet perhaps without a marker).
    const { rest, last } = tsqueryParams(terms)
    // The library, folder, status and type are in the search row (migration 12): only updatedAfter
    // reads the notes table, for the matches.
    const kept = eq.where.replace(/\b(account_id|sandbox|folder_id|status|type)\b/g, 's.$1')
    const from = filter.updatedAfter === undefined ? 'note_search s' : 'note_search s JOIN notes n ON n.id = s.note_id AND n.updated_at > ?'
    const window = (col: string) => `CASE WHEN length(${col}) <= 400 THEN ${col} ELSE substr(${col}, greatest(1, strpos(lower(${col}), lower(?)) - 150), 400) END`
    // The tsquery is written out in each place it is used (match, rank, headline). plainto_tsquery
    // of no words would log a notice, so a one-word search leaves it out.
    const tsquery = rest === '' ? `to_tsquery('simple', ?)` : `(plainto_tsquery('simple', ?) && to_tsquery('simple', ?))`
    const tq = rest === '' ? [last] : [rest, last]
    // ranked by to_tsquery of the last word, or of every word on its own (tsqueryRankText): not by
    // how close the words stand
    const rq = rest === '' ? [last] : [tsqueryRankText(terms)]
    // Planned for this query's own words every time: a statement prepared once per connection would
    // after five runs be given a generic plan, made without knowing how many notes hold the words,
    // which for a common word scans the wrong way (bench/search.ts: 19 ms against 14 ms for a word in
    // 98% of 10,000 notes, 24 against 17 with status and type). SET LOCAL holds for this transaction.
    return store.transaction(async tx => {
      await tx.run('SET LOCAL plan_cache_mode = force_custom_plan')
      return tx.all<{ list_item: string; snippet: string }>(`WITH page AS (
        SELECT s.note_id AS id, s.date_created, ts_rank('{0.1, 0.1, 0.2, 1.0}', s.doc, to_tsquery('simple', ?)) AS score
        FROM ${from}
        WHERE s.doc @@ ${tsquery} AND ${kept}
        ORDER BY score DESC, s.date_created DESC, s.note_id DESC LIMIT ? OFFSET ?)
      SELECT n.list_item, ts_headline('simple', note_search_text(concat_ws(E'\n', n.title, ${window('n.summary')}, ${window('coalesce(b.original_transcription, \'\')')})), ${tsquery},
        'StartSel=«, StopSel=», MaxWords=24, MinWords=10, MaxFragments=1') AS snippet
      FROM page JOIN notes n ON n.id = page.id LEFT JOIN note_bodies b ON b.note_id = n.id
      ORDER BY page.score DESC, page.date_created DESC, page.id DESC`, [...rq, ...afterParams, ...tq, ...eq.params, count, offset, terms.words[0]!, terms.words[0]!, ...tq])
    })
  }

  async function updateColumns(table: 'notes' | 'note_bodies', key: 'id' | 'note_id', id: string, fields: Record<string, unknown>) {
    const cols = Object.keys(fields)
    if (cols.length === 0) return
    // updated_at never goes before date_created, even if the clock stepped back (listJson relies on it)
    const set = (k: string) => (k === 'updated_at' ? `updated_at = ${greatest}(?, date_created)` : `${k} = ?`)
    await store.run(`UPDATE ${table} SET ${cols.map(set).join(', ')} WHERE ${key} = ?`, [...cols.map(k => fields[k] as SqlValue), id])
  }

  return {
    get: (lib: Library, id: string) => store.get<NoteRow>(`${WITH_BODY} WHERE n.id = ? AND n.account_id = ? AND n.sandbox = ?`, [id, lib.accountId, sandbox(lib)]),
    getById: (id: string) => store.get<NoteRow>(`${WITH_BODY} WHERE n.id = ?`, [id]),

    async insert(row: NoteRow) {
      await store.transaction(async () => {
        await store.run(`INSERT INTO notes (${NOTE_COLUMNS.join(', ')}) VALUES (${NOTE_COLUMNS.map(() => '?').join(', ')})`, NOTE_COLUMNS.map(c => row[c]))
        await store.run('INSERT INTO note_bodies (note_id, original_transcription, structured_content, transcript_segments) VALUES (?, ?, ?, ?)', [row.id, row.original_transcription, row.structured_content, row.transcript_segments ?? null])
      })
    },

    /**
     * A page of list items as JSON strings, reading `limit + 1` so the caller can tell whether
     * another page exists.
     */
    listJson: (lib: Library, filter: NoteFilter, limit: number, offset: number): Promise<string[]> => items(lib, filter, limit + 1, offset),

    /**
     * A page of list items (`limit + 1` read, as listJson) made into the response text by `render`.
     * On SQLite, with `pages`, the text is kept until a note changes: a request whose stamp (read
     * through the store, one statement) matches a kept page's is answered from memory; otherwise the
     * page is made in a read transaction and kept under the stamp read in that same transaction. Not
     * inside a caller's transaction, whose uncommitted writes a kept page must never show.
     */
    async listPage(lib: Library, filter: NoteFilter, limit: number, offset: number, render: (items: string[]) => string, knownStamp?: string): Promise<string> {
      const cache = store.inTransaction ? null : pageCache
      const key = `${filterKey(lib, filter)}\u0002${limit}\u0002${offset}`
      if (cache) {
        // the counter as this request's admission read it (PostgreSQL; db/request-reads.ts), else now
        const now = knownStamp ?? String((await store.get<{ n: number | string }>('SELECT n FROM note_revision_counter'))!.n)
        const kept = cache.get(now, key)
        if (kept !== undefined) return kept
      }
      if (!sqliteList) {
        // PostgreSQL: the counter moves at the commit of any note's change on any node, so a kept
        // page is served only while no note has changed anywhere since it was read
        const { items: page, stamp: at } = await postgresPage(lib, filter, limit + 1, offset)
        const text = render(page)
        if (cache && at !== null) cache.set(at, key, text)
        return text
      }
      return store.transaction(async () => {
        const page = render(sqliteList(lib, filter, limit + 1, offset))
        cache?.set(stamp!(), key, page)
        return page
      }, 'read')
    },

    /**
     * A page of search results as list items (JSON strings) and their snippets, reading `limit + 1`
     * so the caller can tell whether another page exists. Never cached: a search is not a list page
     * (the PageCache of listPage keys lists by filters alone).
     */
    searchPage: (lib: Library, filter: NoteFilter, terms: SearchTerms, limit: number, offset: number) => searchRows(lib, filter, terms, limit + 1, offset),

    /** Changes the given columns (of either table) of one note; both tables in one transaction. */
    async write(id: string, fields: Writable) {
      const body: Record<string, unknown> = {}
      const small: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(fields)) ((BODY_COLUMNS as readonly string[]).includes(k) ? body : small)[k] = v
      await store.transaction(async () => {
        await updateColumns('notes', 'id', id, small)
        await updateColumns('note_bodies', 'note_id', id, body)
      })
    },

    delete: async (lib: Library, id: string) => (await store.run('DELETE FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)])) > 0,

    /** Moves every note of a folder to the top level; part of the folder's deletion transaction. */
    unfileAll: (folderId: string, updatedAt: string): Promise<number> =>
      store.run(`UPDATE notes SET folder_id = NULL, updated_at = ${greatest}(?, date_created) WHERE folder_id = ?`, [updatedAt, folderId]),
  }
}
