/**
 * How well the audio where a word was placed fits that word, 0 to 1: the confidence a forced
 * alignment can give. Its lattice posterior cannot serve (a grammar of one path leaves no rival, so
 * it is 1 everywhere). What does tell is the word's acoustic score per frame against the segment's
 * own typical word (the median): a word the speaker did not say there scores several times worse
 * than the words around it, whatever the voice or the microphone, while the per-frame score alone
 * varies threefold between voices. `RATIO_MIDPOINT` and `STEEPNESS` were set on bench/alignment.ts's
 * recordings (docs/decisions.md, "Forced alignment").
 */

/** A word scoring this many times worse per frame than the segment's median word has fit 0.5. */
const RATIO_MIDPOINT = 2.0
const STEEPNESS = 3

export interface ScoredSpan {
  /** the library's acoustic score for the word (log domain: larger is better) */
  acousticScore: number
  /** frames (10 ms) the word spans */
  frames: number
}

/** Each word's fit, in order. */
export function wordFits(words: ScoredSpan[]): number[] {
  const perFrame = words.map(w => w.acousticScore / Math.max(1, w.frames))
  const sorted = [...perFrame].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0
  // scores are at most 0; a segment whose median word scores 0 gives no scale to judge by
  if (median >= 0) return words.map(() => 1)
  return perFrame.map(p => {
    const ratio = p / median
    return 1 / (1 + Math.exp(STEEPNESS * (ratio - RATIO_MIDPOINT)))
  })
}
