import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { TranscriptSegment } from '../../transcript/transcript'
import type { Library } from '../library'
import type { Note, ProcessingStage } from './model'
import type { NewNoteFields } from './note-row'
import type { NoteFields, NotesRepo } from './repo'
import { newSpeakers, speakerOfRow, storedSegments, type NewNoteSpeaker, type NoteTranscript, type NoteTranscriptSpeaker, type SpeakerSuggestion } from './stored-transcript'

/** A note reached its final state (`Done` or `Error` after processing). */
export interface NoteSettled {
  noteId: string
  accountId: string
  sandbox: boolean
  status: 'Done' | 'Error'
  errorCode: string | null
  speakers?: { id: string; name: string; suggestion: SpeakerSuggestion | null }[]
  /** the note's tags as JSON (notes.tags), null for none */
  tags?: string | null
}

/**
 * What processing writes to a note as it goes (DECISIONS.md "Processing states"): the note pending,
 * its stage and progress, the transcript once complete, and its final state (`Done` with the summary,
 * or `Error`); part of NotesService.
 */
export function createProcessingWrites(deps: {
  repo: NotesRepo
  clock: Clock
  store: Pick<Store, 'transaction'>
  /** inserts a new note of the library (NotesService's) */
  insertNew: (lib: Library, fields: NewNoteFields) => Promise<Note>
  /** called in the transaction that writes a note's final state */
  onSettled?: (e: NoteSettled) => Promise<void>
  /** the labels, display names and suggested voices of a note's speakers */
  speakerRefs: (noteId: string) => Promise<{ id: string; name: string; suggestion: SpeakerSuggestion | null }[]>
}) {
  const { repo, clock, store, insertNew } = deps

  /**
   * Writes a note's final state (with the transcript, when given, through the one save path) and
   * tells `onSettled`, in one transaction (the webhooks' outbox commits with it).
   */
  function settle(id: string, fields: NoteFields, status: 'Done' | 'Error', errorCode: string | null, transcript?: () => Promise<NoteTranscript>, title?: string): Promise<void> {
    return store.transaction(async () => {
      await (transcript ? repo.saveTranscript(id, await transcript(), fields) : repo.write(id, fields))
      if (title) await repo.remakeTitle(id, title)
      const row = deps.onSettled ? await repo.getById(id) : null
      if (row) await deps.onSettled!({ noteId: id, accountId: row.account_id, sandbox: Number(row.sandbox) === 1, status, errorCode, tags: row.tags, ...(status === 'Done' ? { speakers: await deps.speakerRefs(id) } : {}) })
    })
  }

  /**
   * The note's transcript with the parts `changes` gives replaced and the others as stored: the one
   * save path writes a transcript whole.
   */
  async function changed(id: string, changes: { text?: string; segments?: TranscriptSegment[]; speakers?: NoteTranscriptSpeaker[] }): Promise<NoteTranscript> {
    const row = changes.text === undefined || changes.segments === undefined ? await repo.getById(id) : undefined
    return {
      text: changes.text ?? row?.original_transcription ?? '',
      segments: changes.segments ?? (row ? storedSegments(row) : null),
      speakers: changes.speakers ?? (await repo.speakersOf(id)).map(speakerOfRow),
    }
  }

  return {
    /** A note that processing will fill in: `Summarizing`, at the given stage. */
    createPending(lib: Library, fields: { title: string; type: string; styleId: string; language: string | null; source: string; stage: ProcessingStage }): Promise<Note> {
      return insertNew(lib, {
        title: fields.title,
        // made by notesvc (from the file name), so the summary may make it again
        title_generated: 1,
        status: 'Summarizing',
        processing_stage: fields.stage,
        type: fields.type,
        style_id: fields.styleId,
        language: fields.language,
        source: fields.source,
      })
    },

    /** Reports how far processing has got (DECISIONS.md "Processing states"). */
    setStage(id: string, stage: ProcessingStage, progress?: number | null): Promise<void> {
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
     * The transcript is complete: it is stored (text, segments, speakers, in one write) before
     * summarizing starts, so a summary that fails leaves it readable (`getNoteTranscript` answers for a
     * note in `Error` with `summarization_failed`).
     */
    saveTranscript(id: string, result: { transcript: string; language: string | null; segments?: TranscriptSegment[]; speakers?: NewNoteSpeaker[] }): Promise<void> {
      return store.transaction(async () => repo.saveTranscript(id, await changed(id, { text: result.transcript, segments: result.segments, speakers: newSpeakers(result.speakers ?? []) }), {
        language: result.language,
        status: 'Summarizing',
        processing_stage: 'summarizing',
        progress: 1,
        updated_at: clock.now().toISOString(),
      }))
    },

    /**
     * A settled note (`Done` or `Error`) is processed again from `stage` (its transcript complete:
     * progress 1), its error cleared; false, nothing written, when it is processing already or gone.
     */
    reopen: async (lib: Library, id: string, stage: ProcessingStage): Promise<boolean> => repo.reopen(lib, id, stage, 1, clock.now().toISOString()),

    /** Processing failed: `Error`, keeping the stage it failed at, with a code and a message for people. */
    fail(id: string, code: string, message: string): Promise<void> {
      return settle(id, { status: 'Error', error_code: code, error_message: message, updated_at: clock.now().toISOString() }, 'Error', code)
    },

    /**
     * Stores finished processing output and marks the note `Done`; without `transcript` and
     * `segments` (the transcript's times, kept for the subtitle exports), those `saveTranscript`
     * stored stay. `styleId`: the style the summary was made in, when not the note's. `title` (the
     * summary's) replaces only a title notesvc made (the file name, an earlier summary's), never one a
     * person gave.
     */
    async finish(id: string, result: { title?: string; summary: string; transcript?: string; structuredContent: Record<string, unknown> | null; language: string | null; segments?: TranscriptSegment[]; styleId?: string }): Promise<void> {
      const transcript = result.transcript !== undefined || result.segments ? () => changed(id, { text: result.transcript, segments: result.segments }) : undefined
      await settle(id, {
        summary: result.summary,
        structured_content: result.structuredContent === null ? null : JSON.stringify(result.structuredContent),
        ...(result.styleId ? { style_id: result.styleId } : {}),
        // a summary made now is of the transcript as it is
        summary_stale: 0,
        language: result.language,
        status: 'Done',
        processing_stage: null,
        progress: 1,
        error_code: null,
        error_message: null,
        updated_at: clock.now().toISOString(),
      }, 'Done', null, transcript, result.title)
    },
  }
}
