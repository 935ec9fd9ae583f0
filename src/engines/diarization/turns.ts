/**
 * From a diarizer's raw segments (which may overlap, numbered by the diarizer) to the interface's
 * turns: no overlaps, inside the recording, speakers numbered in the order they first speak. Also
 * the merge that honours a speaker count the diarizer could not (sherpa-onnx does not cluster a
 * recording of one 10-s window at all).
 */
import type { SpeakerTurn } from './engine'

export interface RawSegment {
  start: number
  end: number
  speaker: number
}

const ms = (seconds: number): number => Math.round(seconds * 1000) / 1000

/**
 * Where segments overlap, the part goes to the speaker whose segment covering it is the longest
 * (the interface's "louder/longer one"; sherpa-onnx gives no loudness). Times are clamped to
 * [0, duration] and rounded to the millisecond (sherpa-onnx's are float32: 0.45000001788139343);
 * empty pieces are dropped; neighbouring pieces of one speaker are joined.
 * Speakers keep the diarizer's numbers here.
 */
export function withoutOverlaps(segments: RawSegment[], duration: number): RawSegment[] {
  const clamped = segments
    .map(s => ({ start: ms(Math.max(0, s.start)), end: ms(Math.min(duration, s.end)), speaker: s.speaker }))
    .filter(s => s.end > s.start)
  const bounds = [...new Set(clamped.flatMap(s => [s.start, s.end]))].sort((a, b) => a - b)
  const out: RawSegment[] = []
  for (let i = 0; i + 1 < bounds.length; i++) {
    const [a, b] = [bounds[i]!, bounds[i + 1]!]
    let best: RawSegment | undefined
    for (const s of clamped) {
      if (s.start > a || s.end < b) continue
      if (!best || s.end - s.start > best.end - best.start || (s.end - s.start === best.end - best.start && s.speaker < best.speaker)) best = s
    }
    if (!best) continue
    const last = out.at(-1)
    if (last && last.speaker === best.speaker && last.end === a) last.end = b
    else out.push({ start: a, end: b, speaker: best.speaker })
  }
  return out
}

/** Renumbers speakers 0, 1, … in the order they are first heard; returns the turns and, per new number, the old one. */
export function numberedByFirstSpeech(segments: RawSegment[]): { turns: SpeakerTurn[]; original: number[] } {
  const original: number[] = []
  const index = new Map<number, number>()
  const turns = [...segments]
    .sort((a, b) => a.start - b.start)
    .map(s => {
      let n = index.get(s.speaker)
      if (n === undefined) {
        n = original.length
        index.set(s.speaker, n)
        original.push(s.speaker)
      }
      return { start: s.start, end: s.end, speaker: n }
    })
  return { turns, original }
}

export function unitLength(v: Float32Array): Float32Array {
  let norm = 0
  for (const x of v) norm += x * x
  norm = Math.sqrt(norm)
  return norm > 0 ? v.map(x => x / norm) : v
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!
  return dot // both unit length
}

/**
 * Joins the most alike speakers (cosine of their voice prints) until at most `count` remain; a joined
 * speaker's print is the speech-weighted mean of the two. Speakers without a print cannot be compared
 * and are left as they are. Returns the segments relabelled and the prints of the speakers kept
 * (keyed by the diarizer's numbers).
 */
export function mergeSpeakers(
  segments: RawSegment[],
  prints: Map<number, Float32Array>,
  count: number,
): { segments: RawSegment[]; prints: Map<number, Float32Array> } {
  const speech = new Map<number, number>()
  for (const s of segments) speech.set(s.speaker, (speech.get(s.speaker) ?? 0) + s.end - s.start)
  const kept = new Map([...prints].filter(([k]) => speech.has(k)))
  const into = new Map<number, number>()
  while (speech.size > count && kept.size >= 2) {
    let pair: [number, number] | undefined
    let best = -Infinity
    const keys = [...kept.keys()]
    for (let i = 0; i < keys.length; i++) {
      for (let j = i + 1; j < keys.length; j++) {
        const c = cosine(kept.get(keys[i]!)!, kept.get(keys[j]!)!)
        if (c > best) [best, pair] = [c, [keys[i]!, keys[j]!]]
      }
    }
    const [a, b] = pair!
    const [wa, wb] = [speech.get(a)!, speech.get(b)!]
    const pa = kept.get(a)!
    const pb = kept.get(b)!
    kept.set(a, unitLength(pa.map((x, i) => x * wa + pb[i]! * wb)))
    kept.delete(b)
    speech.set(a, wa + wb)
    speech.delete(b)
    into.set(b, a)
  }
  const target = (s: number): number => (into.has(s) ? target(into.get(s)!) : s)
  const relabelled = segments.map(s => ({ ...s, speaker: target(s.speaker) }))
  const joined: RawSegment[] = []
  for (const s of relabelled) {
    const last = joined.at(-1)
    if (last && last.speaker === s.speaker && last.end === s.start) last.end = s.end
    else joined.push({ ...s })
  }
  return { segments: joined, prints: kept }
}
