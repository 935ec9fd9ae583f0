import type { SpeakerTurn } from '../../src/engines/diarization/engine'

export interface DerResult {
  /** (missed + falseAlarm + confusion) / scored, 0…; 0 when nothing is scored */
  der: number
  /** seconds of reference speech scored (a moment with two reference speakers counts twice) */
  scored: number
  missed: number
  falseAlarm: number
  confusion: number
}

const RESOLUTION = 0.01

/**
 * Diarization error rate as NIST's md-eval counts it, on a 10-ms grid: moments within `collar`
 * seconds of a reference turn's start or end are not scored; the reference's speakers are mapped
 * one-to-one onto the hypothesis's to maximise the time they share (every mapping tried: fine for
 * the few speakers of a recording); then at each moment with R reference and H hypothesis speakers,
 * max(0, R − H) is missed, max(0, H − R) false alarm, and min(R, H) less the mapped pairs present
 * confusion.
 */
export function diarizationError(reference: SpeakerTurn[], hypothesis: SpeakerTurn[], collar = 0.25): DerResult {
  const end = Math.max(0, ...reference.map(t => t.end), ...hypothesis.map(t => t.end))
  const n = Math.ceil(end / RESOLUTION) + 1
  const skip = new Uint8Array(n)
  for (const t of reference) {
    for (const edge of [t.start, t.end]) {
      const from = Math.max(0, Math.round((edge - collar) / RESOLUTION))
      skip.fill(1, from, Math.min(n, Math.round((edge + collar) / RESOLUTION)))
    }
  }
  const refSpeakers = [...new Set(reference.map(t => t.speaker))]
  const hypSpeakers = [...new Set(hypothesis.map(t => t.speaker))]
  const grid = (turns: SpeakerTurn[], speakers: number[]) =>
    speakers.map(s => {
      const on = new Uint8Array(n)
      for (const t of turns) if (t.speaker === s) on.fill(1, Math.round(t.start / RESOLUTION), Math.round(t.end / RESOLUTION))
      return on
    })
  const ref = grid(reference, refSpeakers)
  const hyp = grid(hypothesis, hypSpeakers)
  const shared = ref.map(r => hyp.map(h => {
    let s = 0
    for (let i = 0; i < n; i++) if (!skip[i] && r[i] && h[i]) s++
    return s
  }))
  const mapping = bestMapping(shared, hyp.length)
  let scored = 0
  let missed = 0
  let falseAlarm = 0
  let confusion = 0
  for (let i = 0; i < n; i++) {
    if (skip[i]) continue
    let r = 0
    let h = 0
    let correct = 0
    ref.forEach((on, k) => {
      if (!on[i]) return
      r++
      const m = mapping[k]!
      if (m >= 0 && hyp[m]![i]) correct++
    })
    for (const on of hyp) h += on[i]!
    scored += r
    missed += Math.max(0, r - h)
    falseAlarm += Math.max(0, h - r)
    confusion += Math.min(r, h) - correct
  }
  const seconds = (x: number) => x * RESOLUTION
  return {
    der: scored ? (missed + falseAlarm + confusion) / scored : 0,
    scored: seconds(scored),
    missed: seconds(missed),
    falseAlarm: seconds(falseAlarm),
    confusion: seconds(confusion),
  }
}

/** For each reference speaker the hypothesis speaker it maps to (-1: none), maximising the shared time. */
function bestMapping(shared: number[][], hypCount: number): number[] {
  let best = -1
  let bestMap: number[] = shared.map(() => -1)
  const current: number[] = []
  const used = new Uint8Array(hypCount)
  const walk = (k: number, total: number) => {
    if (k === shared.length) {
      if (total > best) [best, bestMap] = [total, [...current]]
      return
    }
    current[k] = -1
    walk(k + 1, total)
    for (let h = 0; h < hypCount; h++) {
      if (used[h]) continue
      used[h] = 1
      current[k] = h
      walk(k + 1, total + shared[k]![h]!)
      used[h] = 0
    }
  }
  walk(0, 0)
  return bestMap
}
