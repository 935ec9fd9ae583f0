import type { TranscriptSegment } from '../../engines/asr/engine'

/**
 * Where a note keeps the times of its transcript (for `getNoteTranscript?format=srt|vtt|verbose_json`)
 * without a new column: in `note_bodies.structured_content`, beside the structured content.
 *
 * A note's structured content is always a JSON object (or null), so the stored text is either that
 * object, as before, or, when times are known, the array `[structuredContent, {"segments": …}]`. An
 * array cannot be mistaken for structured content, whatever keys a client chose (`createNote`'s
 * `format` labels it), and rows written before are read unchanged. Only `decodeBody` and `encodeBody`
 * know this; `structuredContent` as the API shows it never includes the times.
 */
export interface StoredBody {
  structuredContent: Record<string, unknown> | null
  /** the timed segments (seconds, words when the engine gave them); null when unknown */
  segments: TranscriptSegment[] | null
}

export function encodeBody(body: StoredBody): string | null {
  if (body.segments) return JSON.stringify([body.structuredContent, { segments: body.segments }])
  return body.structuredContent === null ? null : JSON.stringify(body.structuredContent)
}

export function decodeBody(text: string | null): StoredBody {
  if (text === null) return { structuredContent: null, segments: null }
  const parsed = JSON.parse(text) as unknown
  if (Array.isArray(parsed)) {
    const [structuredContent, timing] = parsed as [Record<string, unknown> | null, { segments?: TranscriptSegment[] } | undefined]
    return { structuredContent, segments: timing?.segments ?? null }
  }
  return { structuredContent: parsed as Record<string, unknown>, segments: null }
}

/**
 * The times of a note's transcript: those stored with it, else (a note processed before times were
 * stored) the segments of the `transcript` style's structured content; null when none are known.
 */
export function noteSegments(body: StoredBody): TranscriptSegment[] | null {
  if (body.segments) return body.segments
  const styled = (body.structuredContent?.transcript as { segments?: unknown } | undefined)?.segments
  if (Array.isArray(styled) && styled.every(s => s && typeof s.start === 'number' && typeof s.end === 'number' && typeof s.text === 'string')) {
    return styled as TranscriptSegment[]
  }
  return null
}
