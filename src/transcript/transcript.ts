/**
 * A transcript as one value: its text, its timed segments (with word times when the engine gave
 * them), its speakers and the names they were given. Pure values and functions, no I/O: the notes
 * repository loads and saves it (NotesRepo.saveTranscript, one transaction), the formats write it,
 * the summary and the answers read it by the names shown. What a speaker is called on screen is
 * decided here and nowhere else (`displayName`).
 */
import type { TimedWord, TranscriptSegment } from '../engines/asr/engine'

export type { TimedWord, TranscriptSegment }

/** A speaker of a transcript: the label its segments carry ("A", "B", …) and the name given, if any. */
export interface TranscriptSpeaker {
  label: string
  name: string | null
}

/**
 * A transcript. `S`: what the caller keeps with each speaker beside its label and name (the notes
 * module keeps the voice print); the edits carry it through unchanged.
 */
export interface Transcript<S extends TranscriptSpeaker = TranscriptSpeaker> {
  text: string
  /** null: no times known (a note created from text, or transcribed before times were kept) */
  segments: readonly TranscriptSegment[] | null
  /** in order of first speech; empty when the recording was not diarized */
  speakers: readonly S[]
}

/** A segment with its speaker as shown (the name, else "Speaker A") and the label it carries. */
export type NamedSegment = TranscriptSegment & { speakerId?: string }

/** What an unnamed speaker is shown as, before its label. */
const UNNAMED = 'Speaker '
/** `UNNAMED` at the start, its letters in either case (ASCII only, as SQL's lower() folds them) */
const UNNAMED_SHOWN = new RegExp(`^${UNNAMED}`, 'i')

/** What a transcript shows for a speaker: the name given, else "Speaker A". */
export function displayName(label: string, name: string | null | undefined): string {
  return name ?? `${UNNAMED}${label}`
}

/**
 * The label of the unnamed speaker a name as shown would be ("Speaker A", in any case: "a"), or null
 * when it cannot be an unnamed speaker's: `displayName` read backwards, for a search by speaker.
 */
export function unnamedLabelIn(shown: string): string | null {
  return UNNAMED_SHOWN.test(shown) ? shown.slice(UNNAMED.length) : null
}

/** The speakers as the interface lists them: each label (`id`) and the name shown. */
export function speakerNames(speakers: readonly TranscriptSpeaker[]): { id: string; name: string }[] {
  return speakers.map(s => ({ id: s.label, name: displayName(s.label, s.name) }))
}

/** The text of a transcript made of these segments: their texts, one space between. */
export function transcriptText(segments: readonly Pick<TranscriptSegment, 'text'>[]): string {
  return segments.map(s => s.text).join(' ')
}

/** What one speaker said: the texts of their segments, in order, one space between. */
export function spokenBy(segments: readonly TranscriptSegment[] | null, label: string): string {
  return transcriptText((segments ?? []).filter(s => s.speaker === label))
}

/** How much a speaker says: their segments and the seconds those last (to the millisecond). */
export function speakingTime(segments: readonly TranscriptSegment[] | null, label: string): { segments: number; seconds: number } {
  const mine = (segments ?? []).filter(s => s.speaker === label)
  return { segments: mine.length, seconds: Math.round(mine.reduce((t, s) => t + Math.max(0, s.end - s.start), 0) * 1000) / 1000 }
}

/**
 * The segments with each speaker label replaced by the name shown: what the text formats, the subtitle
 * cues (the cue input), the summary and the answers read; with `keepLabel`, the label kept as
 * `speakerId` (the verbose export). null without times.
 */
export function namedSegments(t: Pick<Transcript, 'segments' | 'speakers'>, opts: { keepLabel?: boolean } = {}): NamedSegment[] | null {
  if (!t.segments) return null
  const names = new Map(t.speakers.map(s => [s.label, s.name]))
  const shown = (label: string) => displayName(label, names.get(label))
  return t.segments.map(s => (!s.speaker ? s : opts.keepLabel ? { ...s, speakerId: s.speaker, speaker: shown(s.speaker) } : { ...s, speaker: shown(s.speaker) }))
}

/** Every word with its time, in order, when the engine gave word times. */
export function wordsOf(segments: readonly TranscriptSegment[] | null): TimedWord[] {
  return (segments ?? []).flatMap(s => s.words ?? [])
}

/** What separates the paragraphs of an untimed transcript (a note created from text): a blank line. */
export const PARAGRAPH_BREAK = /\r?\n[ \t]*\r?\n/

/** The paragraphs of an untimed transcript, each trimmed, empty ones skipped: its segments in verbose_json. */
export function paragraphs(text: string): string[] {
  return text.split(PARAGRAPH_BREAK).map(p => p.trim()).filter(Boolean)
}
