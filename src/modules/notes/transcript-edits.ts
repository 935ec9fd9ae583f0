import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { Library } from '../library'
import type { NoteFields, NoteRow, NotesRepo } from './repo'
import { storedTranscript, type NoteTranscript } from './stored-transcript'

/** The next transcript an edit makes, and what else of the note changes with it (a summary's names). */
interface TranscriptEdit {
  transcript: NoteTranscript
  fields?: NoteFields
}

/**
 * A change of a note's transcript: read, changed by a pure function of src/transcript/edits.ts, saved
 * through the one save path; part of NotesService, and what the speakers' changes are made with.
 */
export function createTranscriptEdits(deps: {
  repo: NotesRepo
  store: Pick<Store, 'transaction'>
  clock: Clock
  /** the note when its transcript can be read (404, or 409 while processing) */
  readable: (lib: Library, id: string) => Promise<NoteRow>
}) {
  return {
    /**
     * The transcript of a readable note changed by `edit`, which is given the stored transcript and the
     * note's row and returns the next transcript (or throws the request's error: nothing is written);
     * saved with the note's `updatedAt` now, all in one transaction. Returns what was saved.
     */
    editTranscript(lib: Library, id: string, edit: (t: NoteTranscript, note: NoteRow) => TranscriptEdit | Promise<TranscriptEdit>): Promise<NoteTranscript> {
      return deps.store.transaction(async () => {
        const note = await deps.readable(lib, id)
        const { transcript, fields } = await edit(storedTranscript(note, await deps.repo.speakersOf(note.id)), note)
        await deps.repo.saveTranscript(note.id, transcript, { ...fields, updated_at: deps.clock.now().toISOString() })
        return transcript
      })
    },
  }
}
