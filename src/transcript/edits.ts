/**
 * Changes to a transcript, each a pure function from one transcript value to the next: the caller
 * checks that the segment or speaker named exists (its error names the note and what to send), then
 * saves the result in one write (NotesRepo.saveTranscript), which stores the text, the segments and
 * what each speaker said together. The text is derived again (`transcriptText`) only by an edit that
 * changes a segment's words; the ones here move segments between speakers and name them.
 */
import { transcriptText, type TimedWord, type Transcript, type TranscriptSpeaker } from './transcript'

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
