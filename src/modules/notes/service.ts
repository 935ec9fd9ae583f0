import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { ApiError, notFound } from '../../http/errors'
import type { Library } from '../library'
import type { JsonText } from '../../http/responses'
import type { CreateNoteRequest, ListNotesQuery, Note, NoteList, NoteTranscriptFormat, UpdateNoteRequest } from './model'
import type { NoteFilter, NoteRow, NotesRepo } from './repo'
import type { TranscriptSegment } from '../../engines/asr/engine'
import { noteSegments } from './timing'
import { searchTerms } from './search-query'
import type { SpeakersRepo } from './speakers-repo'
import { displayName, speakerRows, type NewNoteSpeaker } from './speakers'
import type { AuditService } from '../audit/service'
import type { AuditBy } from '../audit/model'
import { exportTranscript } from './transcript-export'

export type NotesService = ReturnType<typeof createNotesService>

export function toNote(r: NoteRow): Note {
  return {
    id: r.id,
    title: r.title,
    summary: r.summary,
    status: r.status,
    processingStage: r.processing_stage,
    type: r.type,
    styleId: r.style_id,
    language: r.language,
    folderId: r.folder_id,
    isPinned: r.is_pinned === 1,
    source: r.source,
    dateCreated: r.date_created,
    updatedAt: r.updated_at,
    originalTranscription: r.original_transcription,
    structuredContent: r.structured_content === null ? {} : (JSON.parse(r.structured_content) as Record<string, unknown>),
    summaryStale: r.summary_stale === 1,
    // only on a note whose recording the retention policy removed (docs/decisions.md "Retention")
    ...(r.media_removed_at ? { mediaRemovedAt: r.media_removed_at } : {}),
  }
}

export function createNotesService(deps: {
  repo: NotesRepo
  clock: Clock
  ids: IdGenerator
  /** the database, for the transactions of read-then-write operations */
  store: Pick<Store, 'transaction'>
  /** whether the folder exists; `lock`: inside a transaction, keep it from being deleted until it ends */
  folderExists: (lib: Library, folderId: string, lock?: boolean) => Promise<boolean>
  /** the storage keys of a note's media (its upload), removed after the note is deleted */
  mediaOf?: (noteId: string) => Promise<string[]>
  removeMedia?: (keys: string[]) => Promise<void>
  /** a note reached its final state (`Done` or `Error` after processing); called in the transaction that writes it */
  onSettled?: (e: { noteId: string; accountId: string; sandbox: boolean; status: 'Done' | 'Error'; errorCode: string | null; speakers?: { id: string; name: string }[] }) => Promise<void>
  /** the note's speakers (migration 14), stored with the transcript */
  speakers?: SpeakersRepo
  /** the audit log: deletions and transcript exports are recorded with who made them */
  audit?: Pick<AuditService, 'recordBy'>
}) {
  const { repo, clock, ids, store } = deps

  async function requireNote(lib: Library, id: string): Promise<NoteRow> {
    const row = await repo.get(lib, id)
    if (!row) throw notFound('note', id)
    return row
  }

  /** 400 unless the folder exists; called inside the write's transaction, which it keeps the folder for. */
  async function checkFolder(lib: Library, folderId: string | null | undefined) {
    if (folderId && !(await deps.folderExists(lib, folderId, true))) {
      throw new ApiError('invalid_request', `Folder ${folderId} does not exist in this library; create it first or send folderId null.`, {
        details: [{ field: 'folderId', issue: 'no such folder' }],
      })
    }
  }

  /** Writes a note's final state and tells `onSettled`, in one transaction (the webhooks' outbox commits with it). */
  function settle(id: string, fields: Parameters<NotesRepo['write']>[1], status: 'Done' | 'Error', errorCode: string | null): Promise<void> {
    return store.transaction(async () => {
      await repo.write(id, fields)
      const row = deps.onSettled ? await repo.getById(id) : null
      if (row) await deps.onSettled!({ noteId: id, accountId: row.account_id, sandbox: Number(row.sandbox) === 1, status, errorCode, ...(status === 'Done' ? { speakers: await speakerNames(id) } : {}) })
    })
  }

  /** Inserts a new note of this library, created and updated now; `fields` gives what differs from an empty note. */
  async function insertNew(lib: Library, fields: Pick<NoteRow, 'title' | 'status' | 'type' | 'style_id' | 'source'> & Partial<NoteRow>): Promise<Note> {
    const at = clock.now().toISOString()
    const row: NoteRow = {
      id: ids.next('note'),
      account_id: lib.accountId,
      sandbox: lib.sandbox ? 1 : 0,
      folder_id: null,
      summary: '',
      original_transcription: '',
      structured_content: null,
      processing_stage: null,
      progress: null,
      language: null,
      is_pinned: 0,
      error_code: null,
      error_message: null,
      date_created: at,
      updated_at: at,
      ...fields,
    }
    await repo.insert(row)
    return toNote(row)
  }

  /**
   * An account's searches run one at a time, in the order they came: a search's cost grows with what
   * the notes hold, and SQLite runs them on one read thread (db/read-worker.ts), PostgreSQL on the
   * machine's cores. An account sending many at once waits for its own; another account's search waits
   * for at most one of them, not for all (issue 22).
   */
  const searching = new Map<string, Promise<unknown>>()
  function oneAtATime<T>(accountId: string, run: () => Promise<T>): Promise<T> {
    const before = searching.get(accountId) ?? Promise.resolve()
    const mine = before.then(run, run)
    const tail = mine.catch(() => {})
    searching.set(accountId, tail)
    void tail.then(() => { if (searching.get(accountId) === tail) searching.delete(accountId) })
    return mine
  }

  /**
   * A search (`q`) as a NoteList: the same items in relevance order, each with its `snippet` added as
   * the last field (whitespace runs made one space). A search with no words finds nothing.
   */
  async function searchJson(lib: Library, text: string, filter: Parameters<NotesRepo['searchPage']>[1], limit: number, offset: number): Promise<JsonText<NoteList>> {
    const terms = searchTerms(text)
    const rows = terms.words.length === 0 ? [] : await oneAtATime(lib.accountId, () => repo.searchPage(lib, filter, terms, limit, offset))
    const hasMore = rows.length > limit
    const items = rows.slice(0, limit).map(r => `${r.list_item.slice(0, -1)},"snippet":${JSON.stringify(r.snippet.replace(/\s+/g, ' ').trim())}}`)
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
        ...(q.speaker !== undefined ? { speaker: q.speaker.trim(), speakerWords: searchTerms(q.q ?? '').words } : {}),
      },
    }
  }

  /** The labels and display names of a note's speakers; empty when it was not diarized. */
  async function speakerNames(noteId: string): Promise<{ id: string; name: string }[]> {
    if (!deps.speakers) return []
    return (await deps.speakers.ofNote(noteId)).map(r => ({ id: r.label, name: displayName(r.label, r.name) }))
  }

  return {
    requireNote,

    /** The timed segments (with word times when the engine gave them) of a note `requireNote` read; null when unknown. */
    segmentsOf(row: NoteRow): TranscriptSegment[] | null {
      return noteSegments(row)
    },

    /**
     * A NoteList as JSON text, ready to send: each item's JSON is stored with the note (a generated
     * column), so a page costs one indexed read and a string join, not an object per column and a
     * serialization; on SQLite the page is kept until a note changes.
     */
    async listJson(lib: Library, q: ListNotesQuery, knownStamp?: string): Promise<JsonText<NoteList>> {
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

    get: async (lib: Library, id: string) => toNote(await requireNote(lib, id)),

    /**
     * A note from text is finished at once (DECISIONS.md "Notes created from text"). The folder check
     * and the insert are one transaction: the folder cannot be deleted in between.
     */
    create(lib: Library, body: CreateNoteRequest): Promise<Note> {
      return store.transaction(async () => {
        await checkFolder(lib, body.folderId)
        return insertNew(lib, {
          folder_id: body.folderId ?? null,
          title: body.title,
          summary: body.content,
          original_transcription: body.content,
          structured_content: JSON.stringify({ [body.format ?? 'markdown']: body.content }),
          status: 'Done',
          type: 'import',
          style_id: 'note',
          source: body.source ?? 'api',
        })
      })
    },

    /** A note that processing will fill in: `Summarizing`, at the given stage. */
    createPending(lib: Library, fields: { title: string; type: string; styleId: string; language: string | null; source: string; stage: string }): Promise<Note> {
      return insertNew(lib, {
        title: fields.title,
        status: 'Summarizing',
        processing_stage: fields.stage,
        type: fields.type,
        style_id: fields.styleId,
        language: fields.language,
        source: fields.source,
      })
    },

    getById: (id: string) => repo.getById(id),

    /** Reports how far processing has got (DECISIONS.md "Processing states"). */
    setStage(id: string, stage: string, progress?: number | null): Promise<void> {
      return repo.write(id, { status: 'Summarizing', processing_stage: stage, ...(progress !== undefined ? { progress } : {}), updated_at: clock.now().toISOString() })
    },

    /**
     * How far transcription has got (0 to 1). Not a change of the note a client syncs (its fields are
     * the same), so `updatedAt` stays; the pipeline writes it at most once a second.
     */
    setProgress(id: string, progress: number): Promise<void> {
      return repo.write(id, { progress: Math.min(1, Math.max(0, progress)) })
    },

    /**
     * The transcript is complete: it is stored before summarizing starts, so a summary that fails
     * leaves it readable (`getNoteTranscript` answers for a note in `Error` with `summarization_failed`).
     */
    saveTranscript(id: string, result: { transcript: string; language: string | null; segments?: TranscriptSegment[]; speakers?: NewNoteSpeaker[] }): Promise<void> {
      return store.transaction(async () => {
        await repo.write(id, {
          original_transcription: result.transcript,
          ...(result.segments ? { transcript_segments: JSON.stringify(result.segments) } : {}),
          language: result.language,
          status: 'Summarizing',
          processing_stage: 'summarizing',
          progress: 1,
          updated_at: clock.now().toISOString(),
        })
        if (deps.speakers) await deps.speakers.replace(id, speakerRows(result.segments ?? [], result.speakers ?? []))
      })
    },

    /**
     * A settled note (`Done` or `Error`) is processed again from `stage` (its transcript complete:
     * progress 1), its error cleared; false, nothing written, when it is processing already or gone.
     */
    reopen: async (lib: Library, id: string, stage: string): Promise<boolean> => repo.reopen(lib, id, stage, 1, clock.now().toISOString()),

    /** Processing failed: `Error`, keeping the stage it failed at, with a code and a message for people. */
    fail(id: string, code: string, message: string): Promise<void> {
      return settle(id, { status: 'Error', error_code: code, error_message: message, updated_at: clock.now().toISOString() }, 'Error', code)
    },

    /**
     * Stores finished processing output and marks the note `Done`; without `transcript` and
     * `segments` (the transcript's times, kept for the subtitle exports), those `saveTranscript`
     * stored stay. `styleId`: the style the summary was made in, when not the note's.
     */
    finish(id: string, result: { title?: string; summary: string; transcript?: string; structuredContent: Record<string, unknown> | null; language: string | null; segments?: TranscriptSegment[]; styleId?: string }): Promise<void> {
      return settle(id, {
        ...(result.title ? { title: result.title } : {}),
        summary: result.summary,
        ...(result.transcript !== undefined ? { original_transcription: result.transcript } : {}),
        structured_content: result.structuredContent === null ? null : JSON.stringify(result.structuredContent),
        ...(result.segments ? { transcript_segments: JSON.stringify(result.segments) } : {}),
        ...(result.styleId ? { style_id: result.styleId } : {}),
        summary_stale: 0,
        language: result.language,
        status: 'Done',
        processing_stage: null,
        progress: 1,
        error_code: null,
        error_message: null,
        updated_at: clock.now().toISOString(),
      }, 'Done', null)
    },

    update(lib: Library, id: string, body: UpdateNoteRequest): Promise<Note> {
      return store.transaction(async () => {
        // the UPDATE locks the note; the folder is kept from deletion until the end (no lock on the
        // note is taken before the folder's, so this never waits in a cycle with a folder's deletion)
        await requireNote(lib, id)
        await checkFolder(lib, body.folderId)
        const fields: Parameters<NotesRepo['write']>[1] = { updated_at: clock.now().toISOString() }
        if (body.title !== undefined) fields.title = body.title
        if (body.summary !== undefined) fields.summary = body.summary
        if (body.folderId !== undefined) fields.folder_id = body.folderId
        if (body.isPinned !== undefined) fields.is_pinned = body.isPinned ? 1 : 0
        await repo.write(id, fields)
        return toNote(await requireNote(lib, id))
      })
    },

    /**
     * Deletes the note, then its stored media. The row goes first: a failure to remove a file then
     * leaves an orphan file (logged), never a note whose media is gone. The audit log's record of the
     * deletion (`by`: who, from where) commits with the row or not at all.
     */
    async delete(lib: Library, id: string, by: AuditBy) {
      const keys = (await deps.mediaOf?.(id)) ?? []
      await store.transaction(async () => {
        if (!(await repo.delete(lib, id))) throw notFound('note', id)
        await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'note.deleted', target: { type: 'note', id }, details: { sandbox: lib.sandbox } })
      })
      if (keys.length) await deps.removeMedia?.(keys)
    },

    /** The retention sweep's page of a library's notes created before `cutoff` (NotesRepo.agedPage). */
    agedPage: (lib: Library, cutoff: string, after: { dateCreated: string; id: string } | null, limit: number, recordingsOnly: boolean) =>
      repo.agedPage(lib, cutoff, after, limit, recordingsOnly),

    /**
     * The retention policy removed a settled note's recording (its stored media are already deleted):
     * marks it at `at`, and makes `alsoWrite` (the audit event) in the same transaction. An upload still
     * awaiting its file counts as settled when created before `abandonedBefore`. False, nothing
     * written, when the note is gone, processing, or already marked.
     */
    markMediaRemoved: (lib: Library, id: string, at: string, abandonedBefore: string, alsoWrite: () => Promise<void>): Promise<boolean> => store.transaction(async () => {
      if (!(await repo.markMediaRemoved(lib, id, at, abandonedBefore))) return false
      await alsoWrite()
      return true
    }, 'write'),

    /**
     * The retention policy deletes a settled note (its stored media are already deleted): the row and
     * everything that hangs off it (body, speakers, search rows, upload, jobs), as the user's delete
     * does, with `alsoWrite` (the audit event) in the same transaction. An upload still awaiting its
     * file counts as settled when created before `abandonedBefore`. False, nothing written, when the
     * note is gone or processing.
     */
    deleteSettled: (lib: Library, id: string, abandonedBefore: string, alsoWrite: () => Promise<void>): Promise<boolean> => store.transaction(async () => {
      if (!(await repo.deleteSettled(lib, id, abandonedBefore))) return false
      await alsoWrite()
      return true
    }, 'write'),

    async status(lib: Library, id: string) {
      const r = await requireNote(lib, id)
      return {
        status: r.status,
        processingStage: r.status === 'Done' ? null : r.processing_stage,
        progress: r.status === 'Done' ? 1 : r.progress == null ? null : Number(r.progress),
        isComplete: r.status === 'Done',
        hasError: r.status === 'Error',
        errorMessage: r.status === 'Error' ? r.error_message : null,
        errorCode: r.status === 'Error' ? (r.error_code ?? 'internal') : null,
      }
    },

    /** `getNoteTranscript`: the Transcript, or a `file` in `format`, recorded as exported by `by` once readable (a 404 or 409 exports nothing). */
    async exportTranscript(lib: Library, id: string, format: NoteTranscriptFormat | undefined, by: AuditBy) {
      const r = await readableTranscript(lib, id)
      const speakers = await speakerNames(r.id)
      const transcript = { noteId: r.id, transcript: r.original_transcription, language: r.language, ...(speakers.length ? { speakers } : {}) }
      const file = format === undefined ? null : exportTranscript({ ...transcript, title: r.title, type: r.type, segments: noteSegments(r), speakers }, format)
      await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'note.transcript_exported', target: { type: 'note', id }, details: { format: format ?? 'json', sandbox: lib.sandbox } })
      return file ? { file, title: r.title } : { transcript }
    },

    readableTranscript: (lib: Library, id: string) => readableTranscript(lib, id),

    /** A note's segments with each speaker label replaced by the name shown (for answers that say who said what). */
    async namedSegmentsOf(row: NoteRow): Promise<TranscriptSegment[] | null> {
      const segments = noteSegments(row)
      if (!segments?.some(s => s.speaker)) return segments
      const names = new Map((await speakerNames(row.id)).map(s => [s.id, s.name]))
      return segments.map(s => (s.speaker ? { ...s, speaker: names.get(s.speaker) ?? `Speaker ${s.speaker}` } : s))
    },

    /** Moves a folder's notes to the top level; the folders service calls it inside its deletion. */
    unfileFolder(folderId: string): Promise<number> {
      return repo.unfileAll(folderId, clock.now().toISOString())
    },
  }

  /** The note, when its transcript can be read: 409 while processing, or when processing failed before it. */
  async function readableTranscript(lib: Library, id: string): Promise<NoteRow> {
    const r = await requireNote(lib, id)
    if (r.status === 'Summarizing') {
      throw new ApiError('conflict', `Note ${id} is still processing (stage: ${r.processing_stage ?? 'queued'}); poll GET /v1/notes/${id}/status until isComplete is true.`)
    }
    // a summary that failed leaves the transcript it was given (saved before summarizing)
    if (r.status === 'Error' && !(r.error_code === 'summarization_failed' && r.original_transcription)) {
      throw new ApiError('conflict', `Note ${id} failed processing (${r.error_code ?? 'internal'}), so it has no transcript; see GET /v1/notes/${id}/status.`)
    }
    return r
  }
}
