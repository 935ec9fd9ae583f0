/**
 * Word times for segments whose words a person wrote (a corrected segment, a replacement): the new
 * words aligned to each segment's audio (engines/align, in the aligner's thread), or in proportion to
 * their letters when no engine can align them, and each says which (`timing`, and why: `timingNote`).
 * The words get confidence 1: the confidence says how sure we are the word is right, and a person
 * said it is. Runs before the edit's transaction: none is held open while audio is decoded and aligned.
 */
import { proportionalWords, type Alignment } from '../../engines/align'
import type { ThreadedAligner } from '../../engines/align/thread'
import type { TimedWord, TranscriptSegment } from '../../transcript/transcript'
import type { SegmentAudio, Span } from './segment-audio'

type SegmentTiming = 'aligned' | 'proportional'
/** A word a person wrote: confidence 1. */
type ConfirmedWord = TimedWord & { confidence: number }

export interface TimedText {
  words: ConfirmedWord[]
  timing: SegmentTiming
  /** why the words are timed in proportion (no recording, no engine, audio that does not fit) */
  timingNote?: string
}

export type TimeWords = ReturnType<typeof createSegmentTiming>

export function createSegmentTiming(deps: {
  segmentAudio: (noteId: string, spans: readonly Span[]) => Promise<SegmentAudio>
  aligner: () => ThreadedAligner
}) {
  const confirmed = (words: { word: string; start: number; end: number }[]) => words.map(w => ({ word: w.word, start: w.start, end: w.end, confidence: 1 }))

  /** `text` timed over `seg` with its audio (or why there is none). */
  async function timedOne(seg: TranscriptSegment, text: string, samples: Float32Array | { missing: string }): Promise<TimedText> {
    let why = 'missing' in samples ? samples.missing : ''
    let a: Alignment | null = null
    if (!('missing' in samples)) {
      try {
        a = await deps.aligner().align(samples, text, { offset: seg.start })
      } catch (err) {
        why = `the aligner failed (${(err as Error).message})`
      }
    }
    if (a && a.aligned !== 'proportional') return { words: confirmed(a.words), timing: 'aligned' }
    if (a) why = a.reason ?? 'no engine aligned the words'
    return { words: confirmed(proportionalWords(text, seg.start, seg.end)), timing: 'proportional', timingNote: why }
  }

  /** Each segment's new `text` timed, in order; the recording decoded once for all of them. */
  return async function timeWords(noteId: string, edits: readonly { seg: TranscriptSegment; text: string }[]): Promise<TimedText[]> {
    if (!edits.length) return []
    let audio: SegmentAudio
    try {
      audio = await deps.segmentAudio(noteId, edits.map(e => ({ start: e.seg.start, end: e.seg.end })))
    } catch (err) {
      audio = { missing: `the recording could not be decoded (${(err as Error).message})` }
    }
    const out: TimedText[] = []
    for (const [i, e] of edits.entries()) out.push(await timedOne(e.seg, e.text, 'missing' in audio ? audio : audio.samples[i]!))
    return out
  }
}
