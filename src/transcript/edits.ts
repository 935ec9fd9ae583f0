/**
 * Changes to a transcript, each a pure function from one transcript value to the next: the caller
 * checks that the segment or speaker named exists (its error names the note and what to send), then
 * saves the result in one write (NotesRepo.saveTranscript), which stores the text, the segments and
 * what each speaker said together. The text is derived again (`transcriptText`) only by an edit that
 * changes a segment's words; the ones here move segments between speakers and name them.
 */
import { proportionalWords } from './proportional'
import { transcriptText, type TimedWord, type Transcript, type TranscriptSegment, type TranscriptSpeaker } from './transcript'

/** Speaker `label` named `name` (null: unnamed, shown as "Speaker A" again); `also`: what else the caller keeps with it. */
export function nameSpeaker<S extends TranscriptSpeaker>(t: Transcript<S>, label: string, name: string | null, also: Partial<S> = {}): Transcript<S> {
  return { ...t, speakers: t.speakers.map(s => (s.label === label ? { ...s, ...also, name } : s)) }
}

/** Every segment of speaker `label` given to speaker `into`, and `label` no longer a speaker of the transcript. */
export function mergeSpeaker<S extends TranscriptSpeaker>(t: Transcript<S>, label: string, into: string): Transcript<S> {
  return {
    ...t,
    segments: t.segments && t.segments.map(s => (s.speaker === label ? { ...s, speaker: into } : s)),
    speakers: t.speakers.filter(s => s.label !== label),
  }
}

/** Segment `index` (from 0) said by speaker `label`. */
export function reassignSegment<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, label: string): Transcript<S> {
  return { ...t, segments: t.segments && t.segments.map((s, i) => (i === index ? { ...s, speaker: label } : s)) }
}

/**
 * Segment `index` says `text`, with `words` (timed by the caller: aligned, or in proportion) and how
 * they were timed; the transcript's text derived again from the segments. Engine figures that were
 * about the old words (`avgLogprob`) go.
 */
export function editSegmentText<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, text: string, words: TimedWord[], timing: 'aligned' | 'proportional'): Transcript<S> {
  if (!t.segments) return t
  const segments = t.segments.map((s, i) => {
    if (i !== index) return s
    const { avgLogprob: _, ...kept } = s
    return { ...kept, text, words, timing }
  })
  return { ...t, segments, text: transcriptText(segments) }
}

/**
 * A segment's words as a person sees them (the whitespace-separated tokens of its text, numbered from
 * 0) with their times: the engine's or the aligner's when the segment has one timed word per token
 * (`measured`), else spread over the segment in proportion to their letters (a segment from an engine
 * that gives no word times).
 */
export function segmentWords(seg: TranscriptSegment): { tokens: string[]; words: TimedWord[]; measured: boolean } {
  const tokens = seg.text.split(/\s+/).filter(w => w !== '')
  if (seg.words && seg.words.length === tokens.length) return { tokens, words: seg.words, measured: true }
  return { tokens, words: proportionalWords(seg.text, seg.start, seg.end).map(w => ({ word: w.word, start: w.start, end: w.end })), measured: false }
}

/** The mean natural log of the words' confidences (OpenAI's avg_logprob), when every word has one. */
function avgLogprobOf(words: readonly TimedWord[]): number | undefined {
  if (!words.length || words.some(w => w.confidence === undefined)) return undefined
  const logs = words.map(w => Math.log(Math.max(w.confidence!, 1e-10)))
  return Math.round((logs.reduce((a, b) => a + b, 0) / logs.length) * 1e4) / 1e4
}

/**
 * Words `from` to `to` (exclusive) of `seg` as a segment of their own: it starts where its first word
 * starts (the segment's start for word 0) and ends where its last word ends (the segment's end for the
 * last word). Measured words go with it; without them the times are proportional and it says so.
 */
function wordsAsSegment(seg: TranscriptSegment, from: number, to: number, speaker?: string): TranscriptSegment {
  const { tokens, words, measured } = segmentWords(seg)
  const { avgLogprob: _a, words: _w, timing, speaker: was, ...kept } = seg
  const part: TranscriptSegment = {
    ...kept,
    start: from === 0 ? seg.start : words[from]!.start,
    end: to === tokens.length ? seg.end : words[to - 1]!.end,
    text: tokens.slice(from, to).join(' '),
  }
  if (measured) {
    part.words = words.slice(from, to)
    const lp = avgLogprobOf(part.words)
    if (lp !== undefined) part.avgLogprob = lp
    if (timing) part.timing = timing
  } else part.timing = 'proportional'
  const who = speaker ?? was
  if (who !== undefined) part.speaker = who
  return part
}

/** `segments` with the one at `index` replaced by `parts`, and the transcript's text derived again. */
function withParts<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, count: number, parts: TranscriptSegment[]): Transcript<S> {
  const segments = [...t.segments!.slice(0, index), ...parts, ...t.segments!.slice(index + count)]
  return { ...t, segments, text: transcriptText(segments) }
}

/** A speaker of the transcript, added (unnamed, in label order) when it is not one yet. */
function withSpeaker<S extends TranscriptSpeaker>(speakers: readonly S[], label: string, blank: (label: string) => S): S[] {
  if (speakers.some(s => s.label === label)) return [...speakers]
  const byLabel = (a: S, b: S) => a.label.length - b.label.length || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0)
  return [...speakers, blank(label)].sort(byLabel)
}

/**
 * Segment `index` split before its word `word` (1 ≤ word < its word count; the caller checks): two
 * segments of the same speaker, the first ending where word `word - 1` ends, the second starting where
 * word `word` starts.
 */
export function splitSegment<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, word: number): Transcript<S> {
  const seg = t.segments![index]!
  const n = segmentWords(seg).tokens.length
  return withParts(t, index, 1, [wordsAsSegment(seg, 0, word), wordsAsSegment(seg, word, n)])
}

/**
 * Segments `index` and `index + 1` as one (the caller checks both exist): texts joined with one space,
 * words concatenated (kept only when both have them), from the first's start to the second's end,
 * said by the first's speaker unless `speaker` is given (a new speaker is added, unnamed).
 */
export function mergeSegments<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, speaker: string | undefined, blank: (label: string) => S): Transcript<S> {
  const a = t.segments![index]!
  const b = t.segments![index + 1]!
  const { avgLogprob: _a, words: _w, timing: _t, ...kept } = a
  const merged: TranscriptSegment = { ...kept, start: a.start, end: Math.max(a.end, b.end), text: `${a.text} ${b.text}` }
  if (a.words && b.words) {
    merged.words = [...a.words, ...b.words]
    const lp = avgLogprobOf(merged.words)
    if (lp !== undefined) merged.avgLogprob = lp
  }
  const timing = a.timing === 'proportional' || b.timing === 'proportional' ? 'proportional' : a.timing ?? b.timing
  if (timing) merged.timing = timing
  const who = speaker ?? a.speaker
  if (who !== undefined) merged.speaker = who
  const next = withParts(t, index, 2, [merged])
  return speaker === undefined ? next : { ...next, speakers: withSpeaker(t.speakers, speaker, blank) }
}

/**
 * Words `from` to `to` (inclusive, 0-based; the caller checks) of segment `index` said by speaker
 * `label`: the segment becomes up to three (the words before, the range, the words after), each timed
 * at its words' boundaries; a new speaker is added, unnamed. Returns the transcript and the indices of
 * the segments the old one became.
 */
export function reassignWords<S extends TranscriptSpeaker>(t: Transcript<S>, index: number, from: number, to: number, label: string, blank: (label: string) => S): { transcript: Transcript<S>; segments: number[] } {
  const seg = t.segments![index]!
  const n = segmentWords(seg).tokens.length
  const parts = [
    ...(from > 0 ? [wordsAsSegment(seg, 0, from)] : []),
    from === 0 && to === n - 1 ? { ...seg, speaker: label } : wordsAsSegment(seg, from, to + 1, label),
    ...(to < n - 1 ? [wordsAsSegment(seg, to + 1, n)] : []),
  ]
  const next = withParts(t, index, 1, parts)
  return { transcript: { ...next, speakers: withSpeaker(t.speakers, label, blank) }, segments: parts.map((_, i) => index + i) }
}
