import type { TranscriptSegment } from './engine'

/**
 * Repetition loops: Whisper models sometimes fall into writing the same phrase over and over ("Thank
 * you. Thank you. Thank you. …") for the rest of a window. A chunk whose text does this is decoded
 * again with other settings, and if it still loops the repetition is cut to one occurrence.
 *
 * A loop is a phrase of 1 to 12 words said at least 4 times in a row, covering at least 8 words (so
 * "no, no, no" in real speech is not one; one word needs 8 repeats). Words compare case-insensitively
 * without punctuation.
 */
const MIN_REPEATS = 4
const MIN_WORDS = 8
const MAX_PHRASE = 12

function norm(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean)
}

/** The first loop in `words`: where it starts, the phrase length and how many times it repeats. */
function findLoop(words: readonly string[]): { at: number; phrase: number; repeats: number } | null {
  for (let at = 0; at < words.length; at++) {
    for (let n = 1; n <= MAX_PHRASE && at + 2 * n <= words.length; n++) {
      let k = 1
      while (at + (k + 1) * n <= words.length && same(words, at, at + k * n, n)) k++
      if (k >= MIN_REPEATS && k * n >= MIN_WORDS) return { at, phrase: n, repeats: k }
    }
  }
  return null
}

function same(words: readonly string[], a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (words[a + i] !== words[b + i]) return false
  return true
}

/** Whether the segments' text, read in order, holds a repetition loop. */
export function hasLoop(segments: readonly TranscriptSegment[]): boolean {
  return findLoop(norm(segments.map(s => s.text).join(' '))) !== null
}

/**
 * The segments with their repetition cut: runs of 3 or more segments with the same words are kept as
 * the first (its end extended over the run), and inside a segment a looping phrase is kept once.
 */
export function cutLoops(segments: readonly TranscriptSegment[]): TranscriptSegment[] {
  const out: TranscriptSegment[] = []
  for (let i = 0; i < segments.length; ) {
    const key = norm(segments[i]!.text).join(' ')
    let j = i + 1
    while (j < segments.length && norm(segments[j]!.text).join(' ') === key) j++
    if (j - i >= 3) out.push({ ...segments[i]!, end: segments[j - 1]!.end })
    else for (let k = i; k < j; k++) out.push({ ...segments[k]! })
    i = j
  }
  for (const s of out) {
    let tokens = s.text.split(/\s+/).filter(Boolean)
    for (;;) {
      const loop = findLoop(tokens.map(t => norm(t).join(' ')))
      if (!loop) break
      tokens = [...tokens.slice(0, loop.at + loop.phrase), ...tokens.slice(loop.at + loop.phrase * loop.repeats)]
    }
    const text = tokens.join(' ')
    // words cut from the text leave its word times behind
    if (text !== s.text) delete s.words
    s.text = text
  }
  return out.filter(s => s.text.length > 0)
}
