import type { SqlValue, Store } from '../../db/store'
import type { Library } from '../library'
import type { NoteFilter } from './filter'
import type { PageBoundaries } from './page-boundaries'
import type { RevisionCache } from './revision-cache'
import { saidPatterns, saidText, type SearchTerms } from './search-query'
import { spokenBy, unnamedLabelIn } from '../../transcript/transcript'
import type { NoteSpeakerRow, NoteTranscript } from './stored-transcript'

export { type NoteFilter }

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
  /** when the retention sweep deleted the note's recording (migration 16) */
  media_removed_at?: string | null
  /** 1 when the transcript changed after the summary was made (migration 21) */
  summary_stale?: number
  /** how many times a person changed the transcript: its ETag (migration 22) */
  transcript_version?: number
  /** 1 while the title is one notesvc made (file name, summary), made again with the summary; 0 once a person gave it (migration 24) */
  title_generated?: number
  /** the note's tags as JSON, [{id, name, color}] by name, null for none (migration 28; written by the tags module) */
  tags?: string | null
}

/** A note the retention sweep looks at: its key in the sweep's order and whether it is settled. */
export interface AgedNote {
  id: string
  status: NoteRow['status']
  processing_stage: string | null
  date_created: string
}

/**
 * The notes the retention sweep may take: settled ones (done, failed), and uploads that never got
 * their file or completion (`awaiting_upload`) created before the statement's `abandonedBefore`
 * parameter. Never a note with a job queued or running.
 */
const SWEEPABLE = "(status IN ('Done', 'Error') OR (status = 'Summarizing' AND processing_stage = 'awaiting_upload' AND date_created < ?))"

const BODY_COLUMNS = ['original_transcription', 'structured_content', 'transcript_segments'] as const
type Writable = Partial<Omit<NoteRow, 'id' | 'account_id' | 'sandbox' | 'date_created'>>
/** The columns a write may change beside the transcript (which only saveTranscript writes). */
export type NoteFields = Omit<Writable, 'original_transcription' | 'transcript_segments'>

/**
 * What the notes list path may remember between requests, each forgotten or checked when the notes
 * change, by this process or another one. The SQLite listing uses all three; the PostgreSQL listing,
 * whose database several nodes write, only whole pages (checked against the revision counter).
 */
export interface ListCaches {
  /** list items remembered by revision (absent or null: always read them from the table) */
  items?: RevisionCache | null
  /** whole list pages, kept until a note is inserted, changed or deleted */
  pages?: boolean
  /** the sort key at every n-th position of each list read (SQLite; default: every 16th) */
  boundaries?: PageBoundaries
}

/** A search result: the note's list item (JSON text) and a snippet of where the words were found. */
export interface SearchRow {
  list_item: string
  /** the note's tags as JSON (notes.tags, migration 28), null for none */
  tags: string | null
  snippet: string
}

/**
 * Listing and searching, the queries that differ between the back ends: one implementation per back
 * end (`repo.sqlite.ts`, `repo.postgres.ts`), chosen in the composition root. Both give the same
 * bytes for the same library.
 */
export interface NotesListing {
  /** `count` list items from `offset`, as JSON strings */
  items(lib: Library, filter: NoteFilter, count: number, offset: number): Promise<string[]>
  /**
   * `count` list items from `offset` made into the response text by `render`, kept (with `pages`)
   * until a note changes. `knownStamp`: the notes' revision counter as read earlier in the same request
   * with nothing written since (the rate-limit statement reads it on PostgreSQL), saving a round trip.
   */
  page(lib: Library, filter: NoteFilter, count: number, offset: number, render: (items: string[]) => string, knownStamp?: string): Promise<string>
  /** The key `page` keeps a page of `count` from `offset` under. */
  pageKey(lib: Library, filter: NoteFilter, count: number, offset: number): string
  /**
   * `page`'s kept text under `key` when that can be told at once, without a turn through promises
   * (the repeated first page); undefined when no page is kept under the current stamp, or the stamp
   * cannot be told now: then `page`. `knownStamp` as for `page`.
   */
  kept(key: string, knownStamp?: string): string | undefined
  /** The same as bytes ready to send (made once, kept with the page), for an answer made before routing. */
  keptBody(key: string): Blob | undefined
  /**
   * `count` search results from `offset`, most relevant first, ties newest first then by id, so the
   * order is total and offsets page through it without repeats or gaps while the library stands still.
   */
  search(lib: Library, filter: NoteFilter, terms: SearchTerms, count: number, offset: number): Promise<SearchRow[]>
}

const NOTE_COLUMNS = ['id', 'account_id', 'sandbox', 'folder_id', 'title', 'summary', 'status', 'processing_stage', 'type', 'style_id', 'language', 'is_pinned', 'source', 'error_code', 'error_message', 'date_created', 'updated_at', 'title_generated'] as const
const WITH_BODY = `SELECT n.*, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content, b.transcript_segments
  FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id`
/**
 * The notes' revision counter, read by the shared rate limiter's statement in the same round trip
 * (its `alongside`), which a cached GET /v1/notes then needs no round trip of its own for.
 */
export const REVISION_STAMP_QUERY = 'SELECT n FROM note_revision_counter'

/**
 * The tag= filter's term: the note (`idColumn`) carries the library's tag of a name key. The tag's id
 * is a constant subquery (tags_by_name), so each note costs one probe of note_tags' primary key.
 * Placeholders as given: the library's account and sandbox, then the name key.
 */
export const taggedTerm = (idColumn: string, account: string, sandbox: string, key: string) =>
  `EXISTS (SELECT 1 FROM note_tags nt WHERE nt.note_id = ${idColumn} AND nt.tag_id = (SELECT id FROM tags WHERE account_id = ${account} AND sandbox = ${sandbox} AND name_key = ${key}))`

/** List order: newest first, ties by id. */
export const LIST_ORDER = 'ORDER BY date_created DESC, id DESC'

/**
 * The bounds, in seconds, of migration 4's `changed_within` classes 1 to 8 (class 9 has none): a note
 * of class c changed at most CHANGED_WITHIN[c - 1] seconds after it was created. A list with
 * updatedAfter T reads each class from T - bound(c) only.
 */
export const CHANGED_WITHIN = [60, 600, 3600, 21600, 86400, 7 * 86400, 30 * 86400, 365 * 86400]
export const LAST_CHANGE_CLASS = CHANGED_WITHIN.length + 1

/** The equality filters of a list request as SQL terms (`?` placeholders, columns named `prefix.column`) and their values. */
export function equalities(lib: Library, filter: NoteFilter, prefix = '', idColumn = prefix ? `${prefix}id` : 'notes.id'): { where: string; params: SqlValue[] } {
  const terms = [`${prefix}account_id = ?`, `${prefix}sandbox = ?`]
  const params: SqlValue[] = [lib.accountId, lib.sandbox ? 1 : 0]
  if (filter.folderId === null) terms.push(`${prefix}folder_id IS NULL`)
  else if (filter.folderId !== undefined) {
    terms.push(`${prefix}folder_id = ?`)
    params.push(filter.folderId)
  }
  if (filter.status !== undefined) {
    terms.push(`${prefix}status = ?`)
    params.push(filter.status)
  }
  if (filter.type !== undefined) {
    terms.push(`${prefix}type = ?`)
    params.push(filter.type)
  }
  for (const key of filter.tags ?? []) {
    terms.push(taggedTerm(idColumn, '?', '?', '?'))
    params.push(lib.accountId, lib.sandbox ? 1 : 0, key)
  }
  if (filter.speaker !== undefined) {
    // a speaker of the note by that name (or unnamed, by the name an unnamed speaker is shown as) who said every word
    const patterns = saidPatterns(filter.speakerWords ?? [])
    terms.push(`EXISTS (SELECT 1 FROM note_speakers sp WHERE sp.note_id = ${idColumn} AND (lower(sp.name) = lower(?) OR (sp.name IS NULL AND lower(sp.label) = lower(?)))${patterns.map(() => " AND ' ' || sp.said || ' ' LIKE ?").join('')})`)
    params.push(filter.speaker, unnamedLabelIn(filter.speaker), ...patterns)
  }
  return { where: terms.join(' AND '), params }
}

export type NotesRepo = ReturnType<typeof createNotesRepo>

/** The speaker rows of note `id` made what transcript `t` says, writing only those that differ from `rows` (saveEdit). */
async function saveChangedSpeakers(store: Store, id: string, rows: readonly NoteSpeakerRow[], t: NoteTranscript) {
  const now = new Map(rows.map(r => [r.label, r]))
  const columns = ['name', 'said', 'engine', 'embedding', 'profile_id', 'suggested_profile_id', 'suggested_name', 'suggested_similarity'] as const
  for (const s of t.speakers) {
    const offered = s.suggestion ?? null
    const values = [s.name, saidText(spokenBy(t.segments, s.label)), s.engine, s.embedding, s.profileId, offered?.profileId ?? null, offered?.name ?? null, offered?.similarity ?? null]
    const row = now.get(s.label)
    now.delete(s.label)
    if (!row) {
      await store.run(`INSERT INTO note_speakers (note_id, label, ${columns.join(', ')}) VALUES (?, ?, ${columns.map(() => '?').join(', ')})`, [id, s.label, ...values])
    } else if (columns.some((c, i) => (c === 'suggested_similarity' ? (row[c] == null ? null : Number(row[c])) : row[c] ?? null) !== values[i])) {
      await store.run(`UPDATE note_speakers SET ${columns.map(c => `${c} = ?`).join(', ')} WHERE note_id = ? AND label = ?`, [...values, id, s.label])
    }
  }
  for (const label of now.keys()) await store.run('DELETE FROM note_speakers WHERE note_id = ? AND label = ?', [id, label])
}

/**
 * Notes on either back end: the reads and writes both back ends run as written, with the listing of
 * the back end the store is (`listing`, chosen by the composition root).
 */
export function createNotesRepo(store: Store, listing: NotesListing) {
  const sandbox = (lib: Library) => (lib.sandbox ? 1 : 0)
  /** updated_at never goes before date_created, even if the clock stepped back (the listings rely on it) */
  const notBeforeCreation = store.sql.greatest('?', 'date_created')

  async function updateColumns(table: 'notes' | 'note_bodies', key: 'id' | 'note_id', id: string, fields: Record<string, unknown>) {
    const cols = Object.keys(fields)
    if (cols.length === 0) return
    const set = (k: string) => (k === 'updated_at' ? `updated_at = ${notBeforeCreation}` : `${k} = ?`)
    await store.run(`UPDATE ${table} SET ${cols.map(set).join(', ')} WHERE ${key} = ?`, [...cols.map(k => fields[k] as SqlValue), id])
  }

  async function write(id: string, fields: Writable) {
    const body: Record<string, unknown> = {}
    const small: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(fields)) ((BODY_COLUMNS as readonly string[]).includes(k) ? body : small)[k] = v
    await store.transaction(async () => {
      await updateColumns('notes', 'id', id, small)
      await updateColumns('note_bodies', 'note_id', id, body)
    })
  }

  return {
    get: (lib: Library, id: string) => store.get<NoteRow>(`${WITH_BODY} WHERE n.id = ? AND n.account_id = ? AND n.sandbox = ?`, [id, lib.accountId, sandbox(lib)]),
    getById: (id: string) => store.get<NoteRow>(`${WITH_BODY} WHERE n.id = ?`, [id]),

    async insert(row: NoteRow) {
      await store.transaction(async () => {
        await store.run(`INSERT INTO notes (${NOTE_COLUMNS.join(', ')}) VALUES (${NOTE_COLUMNS.map(() => '?').join(', ')})`, NOTE_COLUMNS.map(c => (c === 'title_generated' ? row.title_generated ?? 0 : row[c])))
        await store.run('INSERT INTO note_bodies (note_id, original_transcription, structured_content, transcript_segments) VALUES (?, ?, ?, ?)', [row.id, row.original_transcription, row.structured_content, row.transcript_segments ?? null])
      })
    },

    /**
     * A page of list items as JSON strings, reading `limit + 1` so the caller can tell whether
     * another page exists.
     */
    listJson: (lib: Library, filter: NoteFilter, limit: number, offset: number): Promise<string[]> => listing.items(lib, filter, limit + 1, offset),

    /**
     * A page of list items (`limit + 1` read, as listJson) made into the response text by `render`,
     * kept until a note changes (NotesListing.page). Never from or into the kept pages inside a
     * caller's transaction, whose uncommitted writes a kept page must never show.
     */
    listPage: (lib: Library, filter: NoteFilter, limit: number, offset: number, render: (items: string[]) => string, knownStamp?: string): Promise<string> =>
      listing.page(lib, filter, limit + 1, offset, render, knownStamp),

    /** The key listPage keeps a page under (NotesListing.pageKey), for its `limit`. */
    pageKey: (lib: Library, filter: NoteFilter, limit: number, offset: number): string => listing.pageKey(lib, filter, limit + 1, offset),
    /** listPage's kept text under `key` when it can be told at once (NotesListing.kept). */
    keptPage: (key: string, knownStamp?: string): string | undefined => listing.kept(key, knownStamp),
    /** The same as bytes ready to send (NotesListing.keptBody). */
    keptBody: (key: string): Blob | undefined => listing.keptBody(key),

    /**
     * A page of search results as list items (JSON strings) and their snippets, reading `limit + 1`
     * so the caller can tell whether another page exists. Never cached: a search is not a list page.
     */
    searchPage: (lib: Library, filter: NoteFilter, terms: SearchTerms, limit: number, offset: number): Promise<SearchRow[]> => listing.search(lib, filter, terms, limit + 1, offset),

    /** Changes the given columns (of either table) of one note, the transcript aside (saveTranscript); both tables in one transaction. */
    write: (id: string, fields: NoteFields) => write(id, fields),

    /** The note's title made again by notesvc (from its summary), unless a person gave the one it has. */
    remakeTitle: (id: string, title: string) => store.run('UPDATE notes SET title = ? WHERE id = ? AND title_generated = 1', [title, id]),

    /** The rows of a note's speakers, in order of first speech (label "A" before "B", "Z" before "AA"). */
    speakersOf: (noteId: string) => store.all<NoteSpeakerRow>('SELECT * FROM note_speakers WHERE note_id = ? ORDER BY length(label), label', [noteId]),

    /**
     * The one write of a note's transcript: its text, its segments and its speakers (each with what
     * they said, for search by speaker) replace what the note had, with `fields` of the note, in one
     * transaction. Every change of a transcript (the pipeline's, a speaker named, merged or given a
     * segment, an edit) goes through here.
     */
    saveTranscript: (id: string, t: NoteTranscript, fields: NoteFields = {}) => store.transaction(async () => {
      await write(id, { ...fields, original_transcription: t.text, transcript_segments: t.segments ? JSON.stringify(t.segments) : null })
      await store.run('DELETE FROM note_speakers WHERE note_id = ?', [id])
      for (const s of t.speakers) {
        const offered = s.suggestion ?? null
        await store.run('INSERT INTO note_speakers (note_id, label, name, said, engine, embedding, profile_id, suggested_profile_id, suggested_name, suggested_similarity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [id, s.label, s.name, saidText(spokenBy(t.segments, s.label)), s.engine, s.embedding, s.profileId, offered?.profileId ?? null, offered?.name ?? null, offered?.similarity ?? null])
      }
    }),

    /**
     * The note's row without its body (an empty original_transcription, no segments) but whether it
     * has a transcript, and segment `index` of its stored segments as JSON (null when it has none
     * there); `stored`: whether the note keeps segments in note_bodies at all (else, an older note,
     * they are read from its structured content). One segment is read without the transcript crossing
     * to the process (an edit aligns it before its transaction).
     */
    segmentOf: (lib: Library, id: string, index: number) => store.get<NoteRow & { segment: string | null; stored: number | string }>(
      `SELECT n.*, CASE WHEN coalesce(b.original_transcription, '') = '' THEN '' ELSE ' ' END AS original_transcription, NULL AS structured_content, NULL AS transcript_segments,
        ${store.sql.jsonElement('b.transcript_segments')} AS segment, CASE WHEN b.transcript_segments IS NULL THEN 0 ELSE 1 END AS stored
        FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = ? AND n.account_id = ? AND n.sandbox = ?`, [index, id, lib.accountId, sandbox(lib)]),

    /**
     * An edit's write of a transcript (saveTranscript's, doing only what the edit needs): the text
     * (and so the search index) only when it changed, the segments as `segmentsJson` (serialised once
     * by the caller, who keeps it in a snapshot revision too) only when `segmentsChanged`, and of the
     * speakers' rows only those that differ from `rows` (what each said included); `fields` of the note.
     */
    async saveEdit(id: string, was: { text: string; rows: readonly NoteSpeakerRow[] }, t: NoteTranscript, segments: { changed: boolean; json: string | null }, fields: NoteFields = {}) {
      const body: Writable = { ...fields }
      if (t.text !== was.text) body.original_transcription = t.text
      if (segments.changed) body.transcript_segments = segments.json
      await write(id, body)
      await saveChangedSpeakers(store, id, was.rows, t)
    },

    /** A note not processing (`Done`, `Error`) back to `Summarizing` at `stage`, its error cleared; false when it is processing or gone. */
    reopen: async (lib: Library, id: string, stage: string, progress: number, at: string) =>
      (await store.run(`UPDATE notes SET status = 'Summarizing', processing_stage = ?, progress = ?, error_code = NULL, error_message = NULL, updated_at = ${notBeforeCreation} WHERE id = ? AND account_id = ? AND sandbox = ? AND status <> 'Summarizing'`,
        [stage, progress, at, id, lib.accountId, sandbox(lib)])) > 0,

    delete: async (lib: Library, id: string) => (await store.run('DELETE FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)])) > 0,

    /**
     * The notes of a library created before `cutoff` (ISO time), oldest first after the key `after`
     * (keyset paging: each page a short read off notes_newest, however large the library), at most
     * `limit`. `recordingsOnly`: only notes made from an upload (type audio or video, the only notes
     * with a stored recording) whose recording the retention sweep has not removed yet.
     */
    agedPage: (lib: Library, cutoff: string, after: { dateCreated: string; id: string } | null, limit: number, recordingsOnly: boolean) => store.all<AgedNote>(
      `SELECT id, status, processing_stage, date_created FROM notes WHERE account_id = ? AND sandbox = ? AND date_created < ?${after ? ' AND (date_created > ? OR (date_created = ? AND id > ?))' : ''}${recordingsOnly ? " AND type IN ('audio', 'video') AND media_removed_at IS NULL" : ''} ORDER BY date_created, id LIMIT ?`,
      [lib.accountId, sandbox(lib), cutoff, ...(after ? [after.dateCreated, after.dateCreated, after.id] : []), limit]),

    /**
     * Marks a settled note's recording (or an abandoned upload's, created before `abandonedBefore`) as
     * removed by the retention policy at `at`; false when it is gone, processing, or already marked.
     */
    markMediaRemoved: async (lib: Library, id: string, at: string, abandonedBefore: string) =>
      (await store.run(`UPDATE notes SET media_removed_at = ?, updated_at = ${notBeforeCreation} WHERE id = ? AND account_id = ? AND sandbox = ? AND ${SWEEPABLE} AND media_removed_at IS NULL`, [at, at, id, lib.accountId, sandbox(lib), abandonedBefore])) > 0,

    /** Deletes a settled note, or an abandoned upload created before `abandonedBefore` (never one processing); false when it is gone or processing. */
    deleteSettled: async (lib: Library, id: string, abandonedBefore: string) =>
      (await store.run(`DELETE FROM notes WHERE id = ? AND account_id = ? AND sandbox = ? AND ${SWEEPABLE}`, [id, lib.accountId, sandbox(lib), abandonedBefore])) > 0,

    /** Moves every note of a folder to the top level; part of the folder's deletion transaction. */
    unfileAll: (folderId: string, updatedAt: string): Promise<number> =>
      store.run(`UPDATE notes SET folder_id = NULL, updated_at = ${notBeforeCreation} WHERE folder_id = ?`, [updatedAt, folderId]),
  }
}
