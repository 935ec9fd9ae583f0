/**
 * Word error rate: the word-level Levenshtein distance between a reference and a hypothesis
 * (substitutions + deletions + insertions), divided by the number of reference words. Words are
 * compared case-insensitively with punctuation stripped (an apostrophe inside a word is kept:
 * "don't" stays one word).
 */

export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .split(/\s+/)
    .map(w => w.replace(/^'+|'+$/g, ''))
    .filter(w => w.length > 0)
}

/** The minimum number of word substitutions, deletions and insertions turning `ref` into `hyp`. */
export function editDistance(ref: readonly string[], hyp: readonly string[]): number {
  // one row of the dynamic-programming table at a time
  let prev = Array.from({ length: hyp.length + 1 }, (_, j) => j)
  for (let i = 1; i <= ref.length; i++) {
    const row = [i]
    for (let j = 1; j <= hyp.length; j++) {
      const sub = prev[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)
      row.push(Math.min(sub, prev[j]! + 1, row[j - 1]! + 1))
    }
    prev = row
  }
  return prev[hyp.length]!
}

export interface WerResult {
  /** substitutions + deletions + insertions */
  errors: number
  /** words in the reference */
  refWords: number
  /** errors / refWords (errors alone when the reference is empty) */
  wer: number
}

export function wer(reference: string, hypothesis: string): WerResult {
  const ref = words(reference)
  const errors = editDistance(ref, words(hypothesis))
  return { errors, refWords: ref.length, wer: errors / Math.max(ref.length, 1) }
}

/** Corpus WER: total errors over total reference words. */
export function totalWer(results: readonly WerResult[]): number {
  const errors = results.reduce((n, r) => n + r.errors, 0)
  const refWords = results.reduce((n, r) => n + r.refWords, 0)
  return errors / Math.max(refWords, 1)
}
