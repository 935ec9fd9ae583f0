import { displayName, type Transcript, type TranscriptSegment, type TranscriptSpeaker } from '../../transcript/transcript'

/**
 * How a note keeps its transcript (src/transcript/ is the value): the text and the segments in
 * note_bodies, each speaker in note_speakers with what they said (for search by speaker), their voice
 * print and the remembered voice that named them. Loaded by `storedTranscript`, saved by
 * NotesRepo.saveTranscript only.
 */

/** The columns of a note's row (NoteRow) its transcript is read from. */
interface TranscriptColumns {
  original_transcription: string
  structured_content: string | null
  /** the segments as JSON (migration 11), null when unknown */
  transcript_segments?: string | null
}

/** A row of note_speakers (migration 14). */
export interface NoteSpeakerRow {
  note_id: string
  label: string
  name: string | null
  said: string
  engine: string | null
  /** JSON array of numbers, unit length */
  embedding: string | null
  profile_id: string | null
  /** the remembered voice suggested for the speaker (migration 23); null when none, or once forgotten */
  suggested_profile_id?: string | null
  suggested_name?: string | null
  suggested_similarity?: number | string | null
}

/** A remembered voice offered for a speaker, not applied until a person confirms it. */
export interface SpeakerSuggestion {
  profileId: string
  name: string
  /** cosine similarity of the speaker's print and the voice's, 0 to 1 */
  similarity: number
}

/** A speaker of a note's transcript: its label and name, and the voice the diarization engine printed. */
export interface NoteTranscriptSpeaker extends TranscriptSpeaker {
  engine: string | null
  /** JSON array of numbers, unit length; null when the engine gives no print */
  embedding: string | null
  /** the remembered voice that named the speaker, if any */
  profileId: string | null
  /** a remembered voice offered for the speaker and not yet answered; absent in revisions made before suggestions */
  suggestion?: SpeakerSuggestion | null
}

export type NoteTranscript = Transcript<NoteTranscriptSpeaker>

/** A speaker as the pipeline hands it over with the transcript. */
export interface NewNoteSpeaker {
  label: string
  name: string | null
  engine: string | null
  embedding: number[] | null
  profileId: string | null
  suggestion?: SpeakerSuggestion | null
}

/** The pipeline's speakers as a transcript keeps them (the print to 5 decimals, as JSON). */
export function newSpeakers(speakers: readonly NewNoteSpeaker[]): NoteTranscriptSpeaker[] {
  return speakers.map(s => ({
    label: s.label,
    name: s.name,
    engine: s.engine,
    embedding: s.embedding ? JSON.stringify(s.embedding.map(x => Math.round(x * 1e5) / 1e5)) : null,
    profileId: s.profileId,
    suggestion: s.suggestion ?? null,
  }))
}

/** A row's suggestion: none once its voice was forgotten (the foreign key set null). */
function suggestionOfRow(r: NoteSpeakerRow): SpeakerSuggestion | null {
  if (!r.suggested_profile_id || r.suggested_name == null || r.suggested_similarity == null) return null
  return { profileId: r.suggested_profile_id, name: r.suggested_name, similarity: Number(r.suggested_similarity) }
}

export const speakerOfRow = (r: NoteSpeakerRow): NoteTranscriptSpeaker => ({ label: r.label, name: r.name, engine: r.engine, embedding: r.embedding, profileId: r.profile_id, suggestion: suggestionOfRow(r) })

/** A speaker as the transcript, its formats and webhooks list them: label, name shown, and the voice suggested. */
export const speakerRef = (s: NoteTranscriptSpeaker) => ({ id: s.label, name: displayName(s.label, s.name), suggestion: s.suggestion ?? null })

/** The segments the note_bodies row holds (migration 11), null when none; what `noteSegments` reads first. */
export function storedSegments(row: Pick<TranscriptColumns, 'transcript_segments'>): TranscriptSegment[] | null {
  return row.transcript_segments ? (JSON.parse(row.transcript_segments) as TranscriptSegment[]) : null
}

/**
 * The times of a note's transcript (for `getNoteTranscript?format=srt|vtt|verbose_json`): those the
 * pipeline stored with it (`note_bodies.transcript_segments`, migration 11), else, for a note
 * processed before times were stored, the segments of the `transcript` style's structured content;
 * null when none are known (text notes, older notes of other styles).
 */
export function noteSegments(row: Pick<TranscriptColumns, 'structured_content' | 'transcript_segments'>): TranscriptSegment[] | null {
  if (row.transcript_segments) return storedSegments(row)
  if (row.structured_content === null) return null
  const structured = JSON.parse(row.structured_content) as Record<string, unknown>
  const styled = (structured.transcript as { segments?: unknown } | undefined)?.segments
  if (Array.isArray(styled) && styled.every(s => s && typeof s.start === 'number' && typeof s.end === 'number' && typeof s.text === 'string')) {
    return styled as TranscriptSegment[]
  }
  return null
}

/** A note's transcript from its row and its speakers' rows. */
export function storedTranscript(row: TranscriptColumns, speakers: readonly NoteSpeakerRow[]): NoteTranscript {
  return { text: row.original_transcription, segments: noteSegments(row), speakers: speakers.map(speakerOfRow) }
}
