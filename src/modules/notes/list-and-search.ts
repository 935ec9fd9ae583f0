import { ApiError } from '../../http/errors'
import type { JsonText } from '../../http/responses'
import type { Library } from '../library'
import { actorOf, type Principal } from '../../http/principal'
import type { ListNotesQuery, NoteList } from './model'
import type { NoteFilter, NotesRepo } from './repo'
import { searchTerms } from './search-query'
import { nameKey } from '../tags/names'
import { withTags } from './note-row'

/** The library a list or search reads, and the person asking (a principal; absent: the library's own person). */
type Reader = Library & Pick<Partial<Principal>, 'actorId'>

/**
 * The library's pages (listNotes) and its searches (listNotes with `q`), answered as JSON text ready
 * to send; part of NotesService.
 */
export function createListAndSearch(repo: NotesRepo) {
  /**
   * A person's searches in a workspace run one at a time, in the order they came: a search's cost
   * grows with what the notes hold, and SQLite runs them on one read thread (db/read-worker.ts),
   * PostgreSQL on the machine's cores. A person sending many at once waits for their own; anyone
   * else's search, another account's or a teammate's in the same workspace, waits for at most one of
   * them, not for all (issue 22; keyed by workspace and person since issue 35).
   */
  const searching = new Map<string, Promise<unknown>>()
  function oneAtATime<T>(reader: Reader, run: () => Promise<T>): Promise<T> {
    const key = `${reader.accountId} ${actorOf(reader)}`
    const before = searching.get(key) ?? Promise.resolve()
    const mine = before.then(run, run)
    const tail = mine.catch(() => {})
    searching.set(key, tail)
    void tail.then(() => { if (searching.get(key) === tail) searching.delete(key) })
    return mine
  }

  /**
   * A search (`q`) as a NoteList: the same items in relevance order, each with its `snippet` added as
   * the last field (whitespace runs made one space). A search with no words finds nothing.
   */
  async function searchJson(lib: Reader, text: string, filter: Parameters<NotesRepo['searchPage']>[1], limit: number, offset: number): Promise<JsonText<NoteList>> {
    const terms = searchTerms(text)
    const rows = terms.words.length === 0 ? [] : await oneAtATime(lib, () => repo.searchPage(lib, filter, terms, limit, offset))
    const hasMore = rows.length > limit
    const items = rows.slice(0, limit).map(r => `${withTags(r.list_item, r.tags).slice(0, -1)},"snippet":${JSON.stringify(r.snippet.replace(/\s+/g, ' ').trim())}}`)
    return `{"data":[${items.join(',')}],"pagination":{"limit":${limit},"offset":${offset},"hasMore":${hasMore}}}` as JsonText<NoteList>
  }

  /** A list request's page and filters as the repository takes them. */
  function listArgs(q: ListNotesQuery): { limit: number; offset: number; filter: NoteFilter } {
    if (q.speaker !== undefined && q.q === undefined) {
      throw new ApiError('invalid_request', 'speaker filters a search: send q with the words that speaker said (GET /v1/notes?q=budget&speaker=Maria).', { details: [{ field: 'speaker', issue: 'sent without q' }] })
    }
    return {
      limit: q.limit ?? 50,
      offset: q.offset ?? 0,
      filter: {
        updatedAfter: q.updatedAfter === undefined ? undefined : new Date(q.updatedAfter).toISOString(),
        folderId: q.folderId === 'null' ? null : q.folderId,
        status: q.status,
        type: q.type,
        ...(q.tag?.length ? { tags: [...new Set(q.tag.map(nameKey))].sort() } : {}),
        ...(q.speaker !== undefined ? { speaker: q.speaker.trim(), speakerWords: searchTerms(q.q ?? '').words } : {}),
      },
    }
  }

  return {
    /**
     * A NoteList as JSON text, ready to send: each item's JSON is stored with the note (a generated
     * column), so a page costs one indexed read and a string join, not an object per column and a
     * serialization; on SQLite the page is kept until a note changes.
     */
    async listJson(lib: Reader, q: ListNotesQuery, knownStamp?: string): Promise<JsonText<NoteList>> {
      const { limit, offset, filter } = listArgs(q)
      if (q.q !== undefined) return searchJson(lib, q.q, filter, limit, offset)
      return (await repo.listPage(lib, filter, limit, offset, items => {
        const hasMore = items.length > limit
        if (hasMore) items.length = limit
        return `{"data":[${items.join(',')}],"pagination":{"limit":${limit},"offset":${offset},"hasMore":${hasMore}}}`
      }, knownStamp)) as JsonText<NoteList>
    },

    /**
     * listJson's answer when the page is kept and that can be told at once (repo.keptPage), with no
     * turn through promises: the repeated first page. undefined otherwise (then listJson); never for
     * a search.
     */
    keptListJson(lib: Library, q: ListNotesQuery, knownStamp?: string): JsonText<NoteList> | undefined {
      if (q.q !== undefined) return undefined
      const { limit, offset, filter } = listArgs(q)
      return repo.keptPage(repo.pageKey(lib, filter, limit, offset), knownStamp) as JsonText<NoteList> | undefined
    },

    /**
     * The key a list request's page is kept under, or undefined for a search (never kept): for the
     * answer made before routing, which remembers it per principal and query string.
     */
    listPageKey(lib: Library, q: ListNotesQuery): string | undefined {
      if (q.q !== undefined) return undefined
      const { limit, offset, filter } = listArgs(q)
      return repo.pageKey(lib, filter, limit, offset)
    },

    /** The page kept under `key` (listPageKey) as UTF-8 bytes ready to send, when keptListJson would find it; else undefined. */
    keptListBodyAt: (key: string): Blob | undefined => repo.keptBody(key),
  }
}
