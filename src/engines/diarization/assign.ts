/**
 * Speakers put on a transcript: each segment gets the label of the speaker who said it, and a segment
 * whose words (with their times) belong to different speakers is cut where the speaker changes. The
 * labels are letters in order of first speech in the transcript (A, B, …, Z, AA, AB, …), as OpenAI's
 * `diarized_json` labels unknown speakers.
 */
import type { TimedWord, TranscriptSegment } from '../asr/engine'
import type { Diarization, SpeakerTurn } from './engine'

/** 0 → A, 25 → Z, 26 → AA. */
export function speakerLabel(index: number): string {
  let n = index
  let label = ''
  do {
    label = String.fromCharCode(65 + (n % 26)) + label
    n = Math.floor(n / 26) - 1
  } while (n >= 0)
  return label
}

/** How long [start, end] and the turn overlap (seconds; 0 when apart). */
function overlap(start: number, end: number, t: SpeakerTurn): number {
  return Math.max(0, Math.min(end, t.end) - Math.max(start, t.start))
}

/**
 * The engine's speaker for [start, end]: the one whose turns cover most of it; with no turn over it
 * (a word in a pause the engine took for silence), the speaker of the nearest turn.
 */
function speakerAt(turns: readonly SpeakerTurn[], start: number, end: number): number | null {
  if (turns.length === 0) return null
  const share = new Map<number, number>()
  for (const t of turns) {
    if (t.end <= start) continue
    if (t.start >= end) break
    const o = overlap(start, end, t)
    if (o > 0) share.set(t.speaker, (share.get(t.speaker) ?? 0) + o)
  }
  let best: number | null = null
  let most = 0
  for (const [speaker, o] of share) {
    if (o > most) {
      most = o
      best = speaker
    }
  }
  if (best !== null) return best
  const mid = (start + end) / 2
  let nearest = turns[0]!
  let distance = Infinity
  for (const t of turns) {
    const d = mid < t.start ? t.start - mid : mid > t.end ? mid - t.end : 0
    if (d < distance) {
      distance = d
      nearest = t
    }
  }
  return nearest.speaker
}

/**
 * Words' speakers with single words between two runs of one other speaker given to that speaker: a
 * turn boundary a few hundred ms off would otherwise make one-word "turns".
 */
function smoothed(speakers: (number | null)[]): (number | null)[] {
  const out = [...speakers]
  for (let i = 1; i < out.length - 1; i++) {
    if (out[i] !== out[i - 1] && out[i - 1] === out[i + 1]) out[i] = out[i - 1]!
  }
  return out
}

export interface LabelledTranscript {
  segments: TranscriptSegment[]
  /** the label of each of the engine's speakers that said anything (engine index → label) */
  labels: Map<number, string>
}

/**
 * The segments with their speakers. Segments with word times are cut at speaker changes (each part's
 * text is its words); segments without are given the speaker who covers most of them. Labels follow
 * the order in which speakers are first heard in the transcript. A diarization with no turns leaves
 * the segments as they are.
 */
export function labelSpeakers(segments: readonly TranscriptSegment[], d: Diarization): LabelledTranscript {
  const turns = [...d.turns].sort((a, b) => a.start - b.start)
  const labels = new Map<number, string>()
  const label = (speaker: number) => {
    let l = labels.get(speaker)
    if (!l) labels.set(speaker, (l = speakerLabel(labels.size)))
    return l
  }
  if (turns.length === 0) return { segments: segments.map(s => ({ ...s })), labels }
  const out: TranscriptSegment[] = []
  for (const s of segments) {
    if (!s.words?.length) {
      const speaker = speakerAt(turns, s.start, s.end)
      out.push(speaker === null ? { ...s } : { ...s, speaker: label(speaker) })
      continue
    }
    const who = smoothed(s.words.map(w => speakerAt(turns, w.start, w.end)))
    let run: TimedWord[] = []
    let runSpeaker = who[0]!
    const flush = () => {
      if (!run.length) return
      const part: TranscriptSegment = { start: run[0]!.start, end: run.at(-1)!.end, text: run.map(w => w.word).join(' '), words: run }
      out.push(runSpeaker === null ? part : { ...part, speaker: label(runSpeaker) })
      run = []
    }
    s.words.forEach((w, i) => {
      if (who[i] !== runSpeaker) {
        flush()
        runSpeaker = who[i]!
      }
      run.push(w)
    })
    // one speaker throughout: the segment as the engine gave it (its text may be punctuated)
    if (run.length === s.words.length) {
      out.push(runSpeaker === null ? { ...s } : { ...s, speaker: label(runSpeaker) })
      run = []
    } else flush()
  }
  return { segments: out, labels }
}
