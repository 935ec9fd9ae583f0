import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { ApiError, notFound } from '../../http/errors'
import type { Library } from '../library'
import type { CreateNoteRequest, Note, UpdateNoteRequest } from './model'
import type { NoteRow, NotesRepo } from './repo'
import type { AuditService } from '../audit/service'
import type { AuditBy } from '../audit/model'
import { createListAndSearch } from './list-and-search'
import { createProcessingWrites, type NoteSettled } from './processing-writes'
import { createTranscriptReads } from './transcript-reads'
import { createTranscriptEdits, type TranscriptEdited } from './transcript-edits'
import type { RevisionsRepo } from './revisions-repo'
import { createRetentionWrites } from './retention-writes'
import { newNoteRow, noteStatus, toNote, type NewNoteFields } from './note-row'

export type NotesService = ReturnType<typeof createNotesService>

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
  onSettled?: (e: NoteSettled) => Promise<void>
  /** the audit log: deletions and transcript exports are recorded with who made them */
  audit?: Pick<AuditService, 'recordBy'>
  /** the transcripts' revisions (migration 22) */
  revisions: RevisionsRepo
  /** a transcript was edited; called in the edit's transaction (the `note.updated` webhook outbox) */
  onEdited?: (e: TranscriptEdited) => Promise<void>
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

  /** Inserts a new note of this library, created and updated now; `fields` gives what differs from an empty note. */
  async function insertNew(lib: Library, fields: NewNoteFields): Promise<Note> {
    const row = newNoteRow(lib, ids.next('note'), clock.now().toISOString(), fields)
    await repo.insert(row)
    return toNote(row)
  }

  const transcripts = createTranscriptReads({ repo, requireNote, audit: deps.audit })

  return {
    requireNote,

    ...createListAndSearch(repo),
    ...createProcessingWrites({ repo, clock, store, insertNew, onSettled: deps.onSettled, speakerRefs: transcripts.speakerRefs }),
    ...transcripts,
    ...createTranscriptEdits({ repo, revisions: deps.revisions, store, clock, audit: deps.audit, onEdited: deps.onEdited }),
    ...createRetentionWrites(repo, store),

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

    getById: (id: string) => repo.getById(id),

    update(lib: Library, id: string, body: UpdateNoteRequest): Promise<Note> {
      return store.transaction(async () => {
        // the UPDATE locks the note; the folder is kept from deletion until the end (no lock on the
        // note is taken before the folder's, so this never waits in a cycle with a folder's deletion)
        await requireNote(lib, id)
        await checkFolder(lib, body.folderId)
        const fields: Parameters<NotesRepo['write']>[1] = { updated_at: clock.now().toISOString() }
        // a person's title: never made again by a summary
        if (body.title !== undefined) Object.assign(fields, { title: body.title, title_generated: 0 })
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
      const keys = await store.transaction(async () => {
        // the media is looked up by the note's id only once the note is known to be the library's
        // (another workspace's note id must not read its upload; the isolation probe's repository check)
        await requireNote(lib, id)
        const keys = (await deps.mediaOf?.(id)) ?? []
        if (!(await repo.delete(lib, id))) throw notFound('note', id)
        await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'note.deleted', target: { type: 'note', id }, details: { sandbox: lib.sandbox } })
        return keys
      })
      if (keys.length) await deps.removeMedia?.(keys)
    },

    /** Where processing stands (getNoteStatus). */
    status: async (lib: Library, id: string) => noteStatus(await requireNote(lib, id)),

    /** Moves a folder's notes to the top level; the folders service calls it inside its deletion. */
    unfileFolder(folderId: string): Promise<number> {
      return repo.unfileAll(folderId, clock.now().toISOString())
    },
  }
}
