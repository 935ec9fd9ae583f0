/**
 * A transcript revision kept as what changed (migration 26): the run of segments an edit replaced,
 * before and after, the speakers when they changed, and whether the text was joined again from the
 * segments; every SNAPSHOT_EVERY versions (and version 0, and an edit that changes much of the
 * transcript) the transcript whole instead, as every revision was kept before. A revision's
 * transcript is its nearest snapshot at or before it with the changes after it applied in order.
 * docs/decisions.md "Transcript revisions kept as changes".
 */
import { transcriptText, type TranscriptSegment } from '../../transcript/transcript'
import type { NoteTranscript, NoteTranscriptSpeaker } from './stored-transcript'

/**
 * A revision at a version divisible by this keeps the transcript whole. Storage per edit is about a
 * 50th of the transcript plus the change (34 KB against 1.7 MB for two hours, bench/edit-patch.ts);
 * reading any revision parses one snapshot and at most 49 changes of a few KB each.
 */
export const SNAPSHOT_EVERY = 50

/** A change that touches more than this share of the segments is kept as a snapshot (smaller, and nothing to replay). */
const SNAPSHOT_SHARE = 0.25

/** What one edit changed, as the `changes` column keeps it (JSON). */
export interface TranscriptChangeRecord {
  /** the index of the first segment replaced */
  at: number
  /** the segments replaced, as they were */
  before: TranscriptSegment[]
  /** what replaced them */
  after: TranscriptSegment[]
  /** present when the text changed: it is the new segments' texts joined (transcriptText) */
  text?: 'joined'
  /** present when the speakers changed: the list before and after */
  speakers?: { before: readonly NoteTranscriptSpeaker[]; after: readonly NoteTranscriptSpeaker[] }
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * What changed from `before` to `after`, or null when the revision must be a snapshot: a transcript
 * without segments, a text not joined from its segments, a change of more than a quarter of the
 * segments. Segments an edit did not touch are the same objects (the edits of src/transcript/edits.ts
 * keep them), so the common start and end are found without serialising them.
 */
export function changeOf(before: NoteTranscript, after: NoteTranscript): TranscriptChangeRecord | null {
  const b = before.segments
  const a = after.segments
  if (!b || !a) return null
  let start = 0
  while (start < b.length && start < a.length && same(b[start], a[start])) start++
  let end = 0
  while (end < b.length - start && end < a.length - start && same(b[b.length - 1 - end], a[a.length - 1 - end])) end++
  const change: TranscriptChangeRecord = { at: start, before: b.slice(start, b.length - end), after: a.slice(start, a.length - end) }
  if (change.before.length + change.after.length > Math.max(b.length, a.length) * SNAPSHOT_SHARE * 2) return null
  if (after.text !== before.text) {
    if (after.text !== transcriptText(a)) return null
    change.text = 'joined'
  }
  if (!same(before.speakers, after.speakers)) change.speakers = { before: before.speakers, after: after.speakers }
  return change
}

/** `t` with `change` applied: the next version's transcript (`t` is left as it was). */
function applyChange(t: NoteTranscript, change: TranscriptChangeRecord): NoteTranscript {
  const segments = t.segments ? [...t.segments] : []
  segments.splice(change.at, change.before.length, ...change.after)
  return {
    text: change.text === 'joined' ? transcriptText(segments) : t.text,
    segments,
    speakers: change.speakers ? change.speakers.after : t.speakers,
  }
}

/** A transcript kept whole, as revisions always were (JSON of its text, segments and speakers). */
export const snapshotJson = (t: NoteTranscript, segmentsJson?: string | null) =>
  segmentsJson == null || !t.segments ? JSON.stringify({ text: t.text, segments: t.segments, speakers: t.speakers })
    // the same bytes as JSON.stringify of the whole, without serialising the segments again
    : `{"text":${JSON.stringify(t.text)},"segments":${segmentsJson},"speakers":${JSON.stringify(t.speakers)}}`

/** A revision's transcript from its nearest snapshot (the first row) and the changes after it, in order of version. */
export function replay(rows: readonly { transcript: string | null; changes: string | null }[]): NoteTranscript {
  const [first, ...rest] = rows
  if (!first?.transcript) throw new Error('a revision chain must start with a snapshot')
  let t = JSON.parse(first.transcript) as NoteTranscript
  for (const r of rest) t = applyChange(t, JSON.parse(r.changes!) as TranscriptChangeRecord)
  return t
}
