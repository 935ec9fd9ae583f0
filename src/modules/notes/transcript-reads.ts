import { ApiError } from '../../http/errors'
import { namedSegments, type TranscriptSegment } from '../../transcript/transcript'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { Library } from '../library'
import type { NoteTranscriptFormat } from './model'
import type { NoteRow, NotesRepo } from './repo'
import { noteSegments, speakerOfRow, speakerRef, storedTranscript, type NoteTranscript, type SpeakerSuggestion } from './stored-transcript'
import { exportTranscript } from './transcript-export'

/**
 * A note's transcript as it is read: exported in a format (getNoteTranscript), by the names shown (for
 * the summary and the answers), and whether it can be read at all; part of NotesService.
 */
export function createTranscriptReads(deps: {
  repo: NotesRepo
  requireNote: (lib: Library, id: string) => Promise<NoteRow>
  /** the audit log: transcript exports are recorded with who made them */
  audit?: Pick<AuditService, 'recordBy'>
}) {
  const { repo, requireNote } = deps

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

  /** The transcript of a note read from the repository: its text, segments and speakers. */
  const transcriptOf = async (row: NoteRow): Promise<NoteTranscript> => storedTranscript(row, await repo.speakersOf(row.id))

  return {
    readableTranscript,
    transcriptOf,

    /** The labels, display names and suggested voices of a note's speakers; empty when it was not diarized. */
    speakerRefs: async (noteId: string): Promise<{ id: string; name: string; suggestion: SpeakerSuggestion | null }[]> => (await repo.speakersOf(noteId)).map(r => speakerRef(speakerOfRow(r))),

    /** `getNoteTranscript`: the Transcript, or a `file` in `format`, recorded as exported by `by` once readable (a 404 or 409 exports nothing). */
    async exportTranscript(lib: Library, id: string, format: NoteTranscriptFormat | undefined, by: AuditBy) {
      const r = await readableTranscript(lib, id)
      const t = await transcriptOf(r)
      const speakers = t.speakers.map(speakerRef)
      const transcript = { noteId: r.id, transcript: t.text, language: r.language, ...(speakers.length ? { speakers } : {}) }
      const file = format === undefined ? null : exportTranscript({ noteId: r.id, title: r.title, type: r.type, language: r.language, transcript: t }, format)
      await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'note.transcript_exported', target: { type: 'note', id }, details: { format: format ?? 'json', sandbox: lib.sandbox } })
      const version = r.transcript_version ?? 0
      return file ? { file, title: r.title, version } : { transcript, version }
    },

    /** A note's segments with each speaker label replaced by the name shown (for answers that say who said what). */
    async namedSegmentsOf(row: NoteRow): Promise<TranscriptSegment[] | null> {
      const segments = noteSegments(row)
      if (!segments?.some(s => s.speaker)) return segments
      return namedSegments({ segments, speakers: (await repo.speakersOf(row.id)).map(speakerOfRow) })
    },
  }
}
