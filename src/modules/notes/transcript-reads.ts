import { ApiError, notFound } from '../../http/errors'
import { namedSegments, type TranscriptSegment } from '../../transcript/transcript'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { Library } from '../library'
import type { NoteTranscriptFormat } from './model'
import type { NoteRow, NotesRepo } from './repo'
import { noteSegments, speakerOfRow, speakerRef, storedTranscript, type NoteTranscript, type SpeakerSuggestion } from './stored-transcript'
import { exportTranscript } from './transcript-export'

/**
 * `r` when its transcript can be read: 404 when there is no such note, 409 while processing, or when
 * processing failed before the transcript was made.
 */
export function checkReadable(id: string, r: NoteRow | null | undefined): NoteRow {
  if (!r) throw notFound('note', id)
  if (r.status === 'Summarizing') {
    throw new ApiError('conflict', `Note ${id} is still processing (stage: ${r.processing_stage ?? 'queued'}); poll GET /v1/notes/${id}/status until isComplete is true.`)
  }
  // a summary that failed leaves the transcript it was given (saved before summarizing)
  if (r.status === 'Error' && !(r.error_code === 'summarization_failed' && r.original_transcription)) {
    throw new ApiError('conflict', `Note ${id} failed processing (${r.error_code ?? 'internal'}), so it has no transcript; see GET /v1/notes/${id}/status.`)
  }
  return r
}

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
  const readableTranscript = async (lib: Library, id: string): Promise<NoteRow> => checkReadable(id, await requireNote(lib, id))

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

    /**
     * Segment `index` of a readable note (404, 409 as readableTranscript), read alone where the note
     * keeps its segments in note_bodies; undefined when it has none of that index, with how many it has.
     */
    async segmentToEdit(lib: Library, id: string, index: number): Promise<{ segment: TranscriptSegment | undefined; count: number }> {
      const r = await repo.segmentOf(lib, id, index)
      checkReadable(id, r)
      if (r!.segment !== null) return { segment: JSON.parse(r!.segment) as TranscriptSegment, count: index + 1 }
      // no such segment (the whole read to say how many), or an older note's segments in its structured content
      const segments = noteSegments(checkReadable(id, await repo.get(lib, id)))
      return { segment: segments?.[index], count: segments?.length ?? 0 }
    },

    /** A note's segments with each speaker label replaced by the name shown (for answers that say who said what). */
    async namedSegmentsOf(row: Pick<NoteRow, 'id' | 'structured_content' | 'transcript_segments'>): Promise<TranscriptSegment[] | null> {
      const segments = noteSegments(row)
      if (!segments?.some(s => s.speaker)) return segments
      return namedSegments({ segments, speakers: (await repo.speakersOf(row.id)).map(speakerOfRow) })
    },
  }
}
