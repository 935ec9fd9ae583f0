import type { AlignedWord } from '../engines/align/word-aligner'

/** Letters and digits: what takes time to say. */
const SPOKEN_CHAR = /[\p{L}\p{N}]/gu

/**
 * The text's words spread over [start, end] in proportion to their letters and digits, one after
 * another: the times when no engine could align them. A token with neither (a dash) takes no time;
 * a text with none at all is spread by its characters.
 */
export function proportionalWords(text: string, start: number, end: number): AlignedWord[] {
  const tokens = text.split(/\s+/).filter(t => t !== '')
  const spoken = tokens.map(t => t.match(SPOKEN_CHAR)?.length ?? 0)
  const weights = spoken.some(n => n > 0) ? spoken : tokens.map(t => t.length)
  const total = weights.reduce((a, b) => a + b, 0)
  const span = Math.max(0, end - start)
  let at = start
  return tokens.map((word, i) => {
    const s = at
    at = i === tokens.length - 1 ? end : at + (span * weights[i]!) / total
    return { word, start: round(s), end: round(Math.max(s, at)), confidence: null }
  })
}

export function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000
}
