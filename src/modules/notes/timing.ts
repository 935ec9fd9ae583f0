import type { TranscriptSegment } from '../../engines/asr/engine'
import type { NoteRow } from './repo'

/**
 * The times of a note's transcript (for `getNoteTranscript?format=srt|vtt|verbose_json`): those the
 * pipeline stored with it (`note_bodies.transcript_segments`, migration 11), else, for a note
 * processed before times were stored, the segments of the `transcript` style's structured content;
 * null when none are known (text notes, older notes of other styles).
 */
export function noteSegments(row: Pick<NoteRow, 'structured_content' | 'transcript_segments'>): TranscriptSegment[] | null {
  if (row.transcript_segments) return JSON.parse(row.transcript_segments) as TranscriptSegment[]
  if (row.structured_content === null) return null
  const structured = JSON.parse(row.structured_content) as Record<string, unknown>
  const styled = (structured.transcript as { segments?: unknown } | undefined)?.segments
  if (Array.isArray(styled) && styled.every(s => s && typeof s.start === 'number' && typeof s.end === 'number' && typeof s.text === 'string')) {
    return styled as TranscriptSegment[]
  }
  return null
}
