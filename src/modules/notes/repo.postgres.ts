import type { PostgresStore, SqlValue } from '../../db/store'
import type { Library } from '../library'
import { filterKey, type NoteFilter } from './filter'
import { PageCache } from './page-cache'
import { withTags } from './note-row'
import { CHANGED_WITHIN, createNotesRepo, equalities, LAST_CHANGE_CLASS, LIST_ORDER, type ListCaches, type NotesListing, type SearchRow } from './repo'
import { tsqueryParams, tsqueryRankText, type SearchTerms } from './search-query'
import { anchorSpellings, BEFORE, SCAN, snippetOf, WINDOW } from './search-snippet'

/**
 * The notes repository on PostgreSQL, whose database several nodes share: every page is read from the
 * database (one query reading the stored `list_item` column in list order), and a whole page is kept
 * only while the notes' revision counter, moved at the commit of any note's change on any node, stands
 * where it stood when the page was read. Search is PostgreSQL's full text (tsvector rows, migration 9
 * and 12).
 */
const ORDER = LIST_ORDER

/** From this many rows kept (offset + count), a search page ranks every match at once, without the titled pass first (searchRows). */
const PRESORTED_FROM = 1000

/**
 * A search result's place as one bigint, compared as a whole (searchRows): the titled notes first (bit
 * 62), then by rank in steps of 2^-20 (bits 32-61, ranks of 1,024 and above as one), then by the
 * second the note was made (bits 0-31, note_search.created_s, migration 35). Only two matches sharing
 * all three go on to date and id, where a sort by titled-or-not, rank, date and id compared the date
 * for nearly every pair of a common word's matches (110 ranks among 9,815 in bench/search.ts).
 */
const placeOf = (titled: string, rank: string) =>
  `(${titled}) | (least(floor(${rank} * 1048576), 1073741823)::int8 << 32) | least(s.created_s, 4294967295)`
/** bit 62 of a place: the note's title holds every word of the search */
const TITLED = '4611686018427387904'
/**
 * The one order of search results, on every page and in each part of one: `t` the alias of the rows
 * and `id` their id column (`place` is always the select list's own column).
 */
const byPlace = (t = '', id = 'id') => `place DESC, ${t}date_created DESC, ${t}${id} DESC`

/** The low 32 bits of a place (placeOf), as note_search_second indexes them (migration 36). */
const SECOND = '(least(s.created_s, 4294967295) & 4294967295)'

/** An array subscript of an offset (an array holds far fewer than 2^31 places: past it is past the end). */
const subscript = (n: string) => `least(${n}, 2147483647)::int`

/**
 * A deep page (`page`) of `matches` (rows of id, date_created and place), in two steps. `places`: every
 * match's place alone, sorted as one array of bigints (an aggregate's sort of one value, where sorting
 * the rows made and compared a row for each of thousands of matches), from which the page's places
 * are cut, with how many matches are placed above its first. Then the matches holding one of those
 * places, found by their second through note_search_second and ranked again, in the full order
 * (place, date, id), where the first `offset - above` of them are before the page. Parameters: offset,
 * offset, count, offset, the matches', the matches' again, offset, count.
 */
const deepPage = (matches: string) => `places AS MATERIALIZED (
        SELECT a[${subscript('?::int8 + 1')} : ${subscript('?::int8 + ?::int8')}] AS page, array_position(a, a[${subscript('?::int8 + 1')}]) - 1 AS above
        FROM (SELECT array_agg(m.place ORDER BY m.place DESC) AS a FROM (${matches}) m) sorted),
      page AS (
        SELECT m.id, m.date_created, m.place FROM (${matches} AND ${SECOND} = ANY(ARRAY(SELECT p & 4294967295 FROM places, unnest(places.page) p))) m
        WHERE m.place = ANY((SELECT page FROM places)::int8[])
        ORDER BY ${byPlace('m.')} OFFSET ?::int8 - (SELECT above FROM places) LIMIT ?)`

/** The first of several strpos() places (0 for none), or null (least() passes over nulls). */
const earliest = (places: string[]) => `least(${places.map(p => `nullif(${p}, 0)`).join(', ')})`

/**
 * Where the anchor word first occurs in a column, 1-based (null when it does not), as on SQLite
 * (repo.sqlite.ts): the first place one of its spellings starts a word, else the first place one
 * occurs at all. `lower` is the column lower-cased (ASCII only, under the "C" collation, as SQLite's
 * lower()), `spaced` the same after a space, with line breaks and tabs as spaces. Parameters: the
 * spellings each after a space, then the spellings.
 */
const firstPlace = (lower: string, spaced: string, spellings: number) => `coalesce(
    ${earliest(Array<string>(spellings).fill(`strpos(${spaced}, ?)`))}, ${earliest(Array<string>(spellings).fill(`strpos(${lower}, ?)`))})`

/**
 * A column's window: WINDOW characters around the anchor word, or SCAN from the start where it does
 * not occur, and one more character, telling that the column goes on.
 */
const windowOf = (i: number) => `CASE WHEN a.p${i} IS NULL THEN 1 ELSE greatest(1, a.p${i} - ${BEFORE}) END AS from${i},
    CASE WHEN a.p${i} IS NULL THEN substr(a.c${i}, 1, ${SCAN + 1}) ELSE substr(a.c${i}, greatest(1, a.p${i} - ${BEFORE}), ${WINDOW + 1}) END AS text${i},
    CASE WHEN a.p${i} IS NULL THEN ${SCAN} ELSE ${WINDOW} END AS size${i}`

/** A window as the index read the text: the note's own « » as ‹ › (note_search_text), so every « » of a snippet is a marker. */
const asIndexed = (text: string) => (text.includes('«') || text.includes('»') ? text.replaceAll('«', '‹').replaceAll('»', '›') : text)

/** A result's list item and the windows of its title (0), summary (1) and transcript (2). */
type SearchWindows = { list_item: string; tags: string | null } & Record<`from${0 | 1 | 2}` | `size${0 | 1 | 2}`, number> & Record<`text${0 | 1 | 2}`, string>

export function createPostgresNotesRepo(store: PostgresStore, caches: Pick<ListCaches, 'pages'> = {}) {
  const pageCache = caches.pages ? new PageCache() : null

  /**
   * `count` list items from `offset`, one query, with the revision counter (migration 5's, moved at
   * the commit of any change to a note) read by the same statement, so in the same snapshot: the stamp
   * a kept page is valid for. The page's keys are read off the list
   * index of the filters alone (an index-only scan, so the rows an offset skips cost an index entry
   * each, not a table read), then only the page's rows are read for their `list_item`. With
   * updatedAfter T the keys are, as on SQLite, the notes created after T (a range of that index:
   * every one of them changed after T, as a note is never updated before it was created), then, all
   * older, those created at or before T and changed since, found through the partial index of notes
   * that changed after their creation (a note of `changed_within` class c created before
   * T - bound(c) cannot have changed after T); each part gives at most `offset + count` keys.
   */
  async function readPage(lib: Library, filter: NoteFilter, count: number, offset: number): Promise<{ items: string[]; stamp: string | null }> {
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
    const rows = await store.all<{ list_item: string | null; tags: string | null; stamp: string | number }>(`WITH counter AS (SELECT n AS stamp FROM note_revision_counter)
      SELECT n.list_item, n.tags, counter.stamp FROM counter LEFT JOIN ((${keys}) page JOIN notes n ON n.id = page.id) ON true
      ORDER BY page.date_created DESC, page.id DESC`, params)
    return { items: rows.filter(r => r.list_item !== null).map(r => withTags(r.list_item!, r.tags)), stamp: rows[0] ? String(rows[0].stamp) : null }
  }

  /**
   * A page of search results: the page's keys first, then, for its rows only, the windows of text
   * around the search's anchor word, from which search-snippet.ts makes the snippet (as on SQLite).
   */
  function searchRows(lib: Library, filter: NoteFilter, terms: SearchTerms, count: number, offset: number): Promise<SearchRow[]> {
    const eq = equalities(lib, filter, 's.', 's.note_id')
    const afterParams = filter.updatedAfter === undefined ? [] : [filter.updatedAfter]
    const { rest, last } = tsqueryParams(terms)
    // The library, folder, status and type are in the search row (migration 12): only updatedAfter
    // reads the notes table, for the matches.
    const from = filter.updatedAfter === undefined ? 'note_search s' : 'note_search s JOIN notes n ON n.id = s.note_id AND n.updated_at > ?'
    // The tsquery is written out in each place it is used. plainto_tsquery of no words would log a
    // notice, so a one-word search leaves it out.
    const tsquery = rest === '' ? `to_tsquery('simple', ?)` : `(plainto_tsquery('simple', ?) && to_tsquery('simple', ?))`
    const tq = rest === '' ? [last] : [rest, last]
    // ts_rank weighing title (A) ten times and summary (B) twice as heavy as the transcript (C), as
    // bm25 does on SQLite (higher is better; the array is D, C, B, A), of to_tsquery of the last word,
    // or of every word on its own (tsqueryRankText): not by how close the words stand. Not
    // ts_rank_cd: cover density costs about twice as much per match (bench/search.ts).
    const rq = rest === '' ? [last] : [tsqueryRankText(terms)]
    const rank = `ts_rank('{0.1, 0.1, 0.2, 1.0}', s.doc, to_tsquery('simple', ?))`
    const want = offset + count
    // A deep page (more than PRESORTED_FROM rows kept) reads and ranks every match whatever the titled
    // notes are: it goes straight to them, titled or not in each one's place, without the titled pass
    // first (4 of 30 ms at offset 5,000 in bench/search.ts).
    const deep = want > PRESORTED_FROM
    // Notes whose title holds every word come first (docs/decisions.md "Notes titled with the words
    // first"), found through the title's own index (migration 31): when they fill the page, the
    // other matches (for a common word, nearly every note, each a tsvector of kilobytes to match and
    // rank) are never read.
    const titled = `SELECT s.note_id AS id, s.date_created, ${placeOf(TITLED, rank)} AS place FROM ${from} WHERE s.head @@ ${tsquery} AND ${eq.where}
      ORDER BY ${byPlace('s.', 'note_id')} LIMIT ?`
    const titledParams = [...rq, ...afterParams, ...tq, ...eq.params, want]
    // Otherwise every match, the titled ones first (placeOf).
    const matches = `SELECT s.note_id AS id, s.date_created, ${placeOf(`CASE WHEN s.head @@ ${tsquery} THEN ${TITLED} ELSE 0 END`, rank)} AS place
      FROM ${from} WHERE s.doc @@ ${tsquery} AND ${eq.where}${deep ? '' : ' AND (SELECT count(*) FROM titled) < ?'}`
    const matchesParams = [...tq, ...rq, ...afterParams, ...tq, ...eq.params, ...(deep ? [] : [want])]
    // A shallow page keeps its top rows in a heap, by their place (one bigint, placeOf) and, where two
    // share it, date and id; a deep page sorts the places alone first (deepPage).
    const pageOf = `SELECT * FROM ((SELECT * FROM titled WHERE (SELECT count(*) FROM titled) >= ? ORDER BY ${byPlace()} LIMIT ? OFFSET ?)
      UNION ALL (${matches} ORDER BY ${byPlace('s.', 'note_id')} LIMIT ? OFFSET ?)) parts ORDER BY ${byPlace()}`
    const ctes = deep ? deepPage(matches) : `titled AS MATERIALIZED (${titled}), page AS (${pageOf})`
    const params = deep ? [offset, offset, count, offset, ...matchesParams, ...matchesParams, offset, count] : [...titledParams, want, count, offset, ...matchesParams, count, offset]
    // each column lower-cased once (ASCII only, as SQLite's lower()), searched for the anchor word's spellings
    const spellings = anchorSpellings(terms)
    const anchorParams = [...spellings.map(w => ` ${w}`), ...spellings]
    // Planned for this query's own words every time (customPlanned): a generic plan, made without
    // knowing how many notes hold the words, scans the wrong way for a common word (bench/search.ts:
    // 19 ms against 14 ms for a word in 98% of 10,000 notes, 24 against 17 with status and type).
    return store.customPlanned(async q => {
      const rows = await q.all<SearchWindows>(`WITH ${ctes},
        texts AS MATERIALIZED (
          SELECT page.*, n.list_item, n.tags, n.title AS c0, n.summary AS c1, coalesce(b.original_transcription, '') AS c2
          FROM page JOIN notes n ON n.id = page.id LEFT JOIN note_bodies b ON b.note_id = n.id),
        anchors AS MATERIALIZED (
          SELECT t.*, ${[0, 1, 2].map(i => `${firstPlace(`l${i}`, `w${i}`, spellings.length)} AS p${i}`).join(', ')}
          FROM texts t, LATERAL (SELECT lower(c0) AS l0, lower(c1) AS l1, lower(c2) AS l2) l,
            LATERAL (SELECT ${[0, 1, 2].map(i => `' ' || replace(replace(l${i}, chr(10), ' '), chr(9), ' ') AS w${i}`).join(', ')}) w)
        SELECT list_item, tags, ${[0, 1, 2].map(i => windowOf(i)).join(', ')}
        FROM anchors a ORDER BY ${byPlace('a.')}`, [...params, ...[0, 1, 2].flatMap(() => anchorParams)])
      return rows.map(r => ({
        list_item: r.list_item,
        tags: r.tags,
        snippet: snippetOf(([0, 1, 2] as const).map(i => ({ from: r[`from${i}`], text: asIndexed(r[`text${i}`]), size: r[`size${i}`] })), terms),
      }))
    })
  }

  const pageKey = (lib: Library, filter: NoteFilter, count: number, offset: number) => `${filterKey(lib, filter)}\u0002${count}\u0002${offset}`
  const listing: NotesListing = {
    items: async (lib, filter, count, offset) => (await readPage(lib, filter, count, offset)).items,
    pageKey,
    // at once only with the counter admission read alongside (this request's, nothing written since)
    kept: (key, knownStamp) => (knownStamp === undefined || !pageCache || store.inTransaction ? undefined : pageCache.get(knownStamp, key)),
    // before routing nothing has read the counter: the route answers
    keptBody: () => undefined,
    async page(lib, filter, count, offset, render, knownStamp) {
      const cache = store.inTransaction ? null : pageCache
      const key = pageKey(lib, filter, count, offset)
      if (cache) {
        // the counter as read earlier in this request (the rate-limit statement), else now
        const now = knownStamp ?? String((await store.get<{ n: number | string }>('SELECT n FROM note_revision_counter'))!.n)
        const kept = cache.get(now, key)
        if (kept !== undefined) return kept
      }
      // the counter moves at the commit of any note's change on any node, so a kept page is served
      // only while no note has changed anywhere since it was read
      const { items, stamp } = await readPage(lib, filter, count, offset)
      const text = render(items)
      if (cache && stamp !== null) cache.set(stamp, key, text)
      return text
    },
    search: searchRows,
  }
  return createNotesRepo(store, listing)
}
