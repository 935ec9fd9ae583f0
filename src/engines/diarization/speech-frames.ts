import type { SpeakerTurn } from './engine'
import { FRAMES_PER_SECOND } from './features'

/**
 * What the builtin engine and the channel splitter share: finding speech by loudness in 10-ms
 * frames, and turning a speaker label per frame into turns (no flicker shorter than MIN_TURN, one
 * speaker's short pauses kept inside the turn, speakers numbered in the order they are first heard).
 */

/** Loudness below which nothing is speech: -50 dBFS mean power (log10 units). */
const ABSOLUTE_FLOOR = -5
/** Where between the noise floor (10th percentile) and the loud speech (95th) speech starts. */
const RELATIVE_THRESHOLD = 0.3
/** Pauses shorter than this inside speech count as speech; bursts shorter than MIN_SPEECH are noise. */
const FILL_GAP = 0.3
const MIN_SPEECH = 0.12
/** Shortest turn: shorter runs are folded into their neighbours. */
export const MIN_TURN = 0.5
/** Pauses of one speaker shorter than this stay inside the turn. */
const JOIN_GAP = 0.5

/**
 * Each frame: 2 loud enough to be speech, 1 a short pause inside speech (counted as speech in turns,
 * but it says nothing of the voice), 0 the rest.
 */
export function findSpeech(energy: Float32Array): Uint8Array {
  const sorted = Float32Array.from(energy).sort()
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? ABSOLUTE_FLOOR
  const noise = at(0.1)
  const loud = at(0.95)
  const threshold = Math.max(ABSOLUTE_FLOOR, noise + RELATIVE_THRESHOLD * (loud - noise))
  const speech = new Uint8Array(energy.length)
  for (let i = 0; i < energy.length; i++) speech[i] = energy[i]! > threshold ? 2 : 0
  fillRuns(speech, 0, Math.round(FILL_GAP * FRAMES_PER_SECOND), 1)
  // bursts too short to be speech (a click, a knock), pauses included
  const shortest = Math.round(MIN_SPEECH * FRAMES_PER_SECOND)
  for (let i = 0; i < speech.length;) {
    let j = i
    while (j < speech.length && speech[j]) j++
    if (j - i < shortest) speech.fill(0, i, j)
    i = j + 1
  }
  return speech
}

/** Sets runs of `value` shorter than `shorter` frames, between other values, to `to`. */
function fillRuns(mask: Uint8Array, value: number, shorter: number, to: number): void {
  let i = 0
  while (i < mask.length) {
    if (mask[i] !== value) {
      i++
      continue
    }
    let j = i
    while (j < mask.length && mask[j] === value) j++
    const inside = value === 0 ? i > 0 && j < mask.length : true
    if (j - i < shorter && inside) mask.fill(to, i, j)
    i = j
  }
}

/** Runs of one label shorter than `shortest` speech frames take the label of the longer neighbour run. */
export function foldShortRuns(labels: Int32Array, speechIndex: number[], shortest: number): void {
  for (let pass = 0; pass < 4; pass++) {
    const runs: { from: number; to: number; label: number }[] = []
    for (let i = 0; i < speechIndex.length; i++) {
      const l = labels[speechIndex[i]!]!
      if (runs.length && runs.at(-1)!.label === l) runs.at(-1)!.to = i + 1
      else runs.push({ from: i, to: i + 1, label: l })
    }
    let changed = false
    // shortest runs first, so a flicker joins a real turn rather than another flicker
    const order = runs.map((_, i) => i).sort((a, b) => runs[a]!.to - runs[a]!.from - (runs[b]!.to - runs[b]!.from))
    for (const r of order) {
      const run = runs[r]!
      if (run.to - run.from >= shortest || runs.length < 2) break
      const before = runs[r - 1]
      const after = runs[r + 1]
      const into = !before ? after! : !after ? before : before.to - before.from >= after.to - after.from ? before : after
      if (into.label === run.label) continue
      for (let i = run.from; i < run.to; i++) labels[speechIndex[i]!] = into.label
      run.label = into.label
      changed = true
    }
    if (!changed) break
  }
}

/** Turns from frame labels: runs of one speaker over speech, joined across short pauses. */
export function toTurns(labels: Int32Array, speech: Uint8Array): SpeakerTurn[] {
  const turns: SpeakerTurn[] = []
  const joinFrames = Math.round(JOIN_GAP * FRAMES_PER_SECOND)
  let t = 0
  while (t < speech.length) {
    if (!speech[t]) {
      t++
      continue
    }
    const speaker = labels[t]!
    let end = t
    while (end < speech.length && speech[end] && labels[end] === speaker) end++
    const last = turns.at(-1)
    const start = t / FRAMES_PER_SECOND
    if (last && last.speaker === speaker && t - last.end * FRAMES_PER_SECOND <= joinFrames) last.end = end / FRAMES_PER_SECOND
    else turns.push({ start, end: end / FRAMES_PER_SECOND, speaker })
    t = end
  }
  return turns.map(x => ({ start: round(x.start), end: round(x.end), speaker: x.speaker }))
}

function firstHeard(turns: SpeakerTurn[]): Map<number, number> {
  const order = new Map<number, number>()
  for (const t of turns) if (!order.has(t.speaker)) order.set(t.speaker, order.size)
  return order
}

/** Turns with speakers renumbered 0, 1, … in the order they are first heard, and that order. */
export function numberTurns(turns: SpeakerTurn[]): { turns: SpeakerTurn[]; order: Map<number, number> } {
  const order = firstHeard(turns)
  return { turns: turns.map(t => ({ ...t, speaker: order.get(t.speaker)! })), order }
}

function round(x: number): number {
  return Math.round(x * 100) / 100
}
