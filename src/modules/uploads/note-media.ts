import type { Logger } from '../../log'
import type { MediaStorage } from '../../storage/storage'
import type { UploadsRepo } from './repo'

/** A note's recording as its upload stored it, for processing it. */
export interface NoteRecording {
  storageKey: string
  /** the speaker count the submitter gave, as JSON (`{"exact":n}` or `{"min":a,"max":b}`); null: the engine estimates */
  speakersHint: string | null
  /** the recording's length measured at completion; null before */
  durationSeconds: number | null
  /** the charge of its completion, which a failed processing refunds; null when nothing was charged */
  usageId: string | null
  /** the file name the upload gave ("planning-meeting.wav") */
  fileName: string
}

/**
 * The stored media of a note (its upload's file), as the notes service needs it to delete a note
 * (which storage keys it has, and removing them) and processing to read it. Built from the uploads
 * repo alone, so it exists before the uploads service, which needs the notes service.
 */
export function createNoteMedia(deps: { repo: UploadsRepo; storage: MediaStorage; log: Logger }) {
  return {
    /** the note's recording, or null when it has no upload */
    recording: async (noteId: string): Promise<NoteRecording | null> => {
      const upload = await deps.repo.byNote(noteId)
      return upload && { storageKey: upload.storage_key, speakersHint: upload.speakers_hint ?? null, durationSeconds: upload.duration_seconds, usageId: upload.usage_id, fileName: upload.file_name }
    },
    /** the storage keys of a note's media: its upload's file, if it has one */
    of: async (noteId: string): Promise<string[]> => {
      const upload = await deps.repo.byNote(noteId)
      return upload ? [upload.storage_key] : []
    },
    /**
     * Deletes one stored file and says whether there was one (the retention sweep counts them). Asked
     * first, because S3's DeleteObject answers the same whether the object existed or not. Any storage
     * error throws.
     */
    deleteStored: async (key: string): Promise<boolean> => {
      const there = (await deps.storage.stat(key)) !== null
      await deps.storage.delete(key)
      return there
    },
    /** removes stored files; a file that cannot be removed is logged and left (an orphan, never an error) */
    remove: async (keys: string[]): Promise<void> => {
      for (const key of keys) {
        await deps.storage.delete(key).catch(err => deps.log.error('could not remove the media of a deleted note', { key, error: err }))
      }
    },
  }
}
