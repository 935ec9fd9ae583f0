import type { Library } from '../library'
import type { Note } from './model'
import type { NoteRow } from './repo'

/** A note's row as the interface shows it (Note). */
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
    tags: r.tags ? (JSON.parse(r.tags) as Note['tags']) : [],
    originalTranscription: r.original_transcription,
    structuredContent: r.structured_content === null ? {} : (JSON.parse(r.structured_content) as Record<string, unknown>),
    summaryStale: r.summary_stale === 1,
    // only on a note whose recording the retention policy removed (docs/decisions.md "Retention")
    ...(r.media_removed_at ? { mediaRemovedAt: r.media_removed_at } : {}),
  }
}

/** Where processing of a note stands, as the interface shows it (NoteStatus). */
export function noteStatus(r: NoteRow) {
  return {
    status: r.status,
    processingStage: r.status === 'Done' ? null : r.processing_stage,
    progress: r.status === 'Done' ? 1 : r.progress == null ? null : Number(r.progress),
    isComplete: r.status === 'Done',
    hasError: r.status === 'Error',
    errorMessage: r.status === 'Error' ? r.error_message : null,
    errorCode: r.status === 'Error' ? (r.error_code ?? 'internal') : null,
  }
}

/** What a new note gives beside an empty one of its library. */
export type NewNoteFields = Pick<NoteRow, 'title' | 'status' | 'type' | 'style_id' | 'source'> & Partial<NoteRow>

/** The row of a new note of this library, created and updated `at`; `fields` gives what differs from an empty note. */
export function newNoteRow(lib: Library, id: string, at: string, fields: NewNoteFields): NoteRow {
  return {
    id,
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
    title_generated: 0,
    ...fields,
  }
}

/** A stored list item (notes.list_item) with the note's tags (notes.tags) added as its last field. */
export const withTags = (listItem: string, tags: string | null | undefined): string => `${listItem.slice(0, -1)},"tags":${tags ?? '[]'}}`
