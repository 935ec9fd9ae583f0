/**
 * Extractive answers: from the passages retrieval found, the sentences of the best passage that contain
 * the question's terms, with the next-best passage when it scores almost as well.
 */
import type { AnswerInput, AnswerOutput } from '../engine'
import { isContentWord, splitSentences, stem, terms as termsOf } from '../text'
import { WORD_RE } from './analysis'

export const NO_ANSWER = 'The transcript does not appear to answer this question.'

/** Sentences of a passage with how many of the question's terms each contains. */
function answerFrom(text: string, q: Set<string>): { text: string; hits: number } {
  const sentences = splitSentences(text)
  if (!sentences.length) return { text: text.trim(), hits: 0 }
  const hits = sentences.map(s => {
    const found = new Set<string>()
    for (const m of s.text.matchAll(WORD_RE)) {
      const w = m[0].toLowerCase().replace(/,/g, '')
      if (isContentWord(w)) {
        const t = stem(w)
        if (q.has(t)) found.add(t)
      }
    }
    return found.size
  })
  let best = 0
  for (let i = 1; i < hits.length; i++) if (hits[i]! > hits[best]!) best = i
  if (!hits[best]) return { text: sentences.map(s => s.text).join(' '), hits: 0 }
  // the best sentence, with its neighbours when they speak of the question too (or it is very short)
  let from = best
  let to = best
  if (best > 0 && hits[best - 1]! > 0) from = best - 1
  if (best + 1 < sentences.length && (hits[best + 1]! > 0 || sentences[best]!.text.length < 60)) to = best + 1
  return { text: sentences.slice(from, to + 1).map(s => s.text).join(' '), hits: hits[best]! }
}

export function answerQuestion(input: AnswerInput): AnswerOutput {
  const passages = input.passages.filter(p => p.score > 0 && p.text.trim())
  if (!passages.length) return { answer: NO_ANSWER }
  const q = new Set<string>()
  for (const m of (input.question ?? '').matchAll(WORD_RE)) {
    const w = m[0].toLowerCase().replace(/,/g, '')
    if (isContentWord(w)) q.add(stem(w))
  }
  const best = passages[0]!
  if (!q.size) return { answer: best.text.trim() }
  const parts = [answerFrom(best.text, q).text]
  // the best passage has under half of the question's terms: say so, and show it anyway
  const inBest = new Set(termsOf(best.text))
  let covered = 0
  for (const t of q) if (inBest.has(t)) covered++
  const weak = q.size >= 3 && covered / q.size < 0.5
  const second = passages[1]
  if (second && second.score >= 0.9 * best.score) {
    const overlaps = second.offset < best.offset + best.text.length && best.offset < second.offset + second.text.length
    const extra = answerFrom(second.text, q)
    if (!overlaps && extra.hits > 0 && !parts[0]!.includes(extra.text)) parts.push(extra.text)
  }
  const answer = parts.join(' … ')
  return { answer: weak ? `${NO_ANSWER} The closest passage: ${answer}` : answer }
}
