/**
 * Extractive answers: from the passages retrieval found, the sentences of the best passage that contain
 * the question's terms, with the next-best passage when it scores almost as well; at most
 * MAX_ANSWER_SENTENCES sentences, never a whole passage. A passage none of whose sentences contains a
 * term of the question answers nothing. When the transcript's sentences come with times (cut from
 * word times, ../sentences.ts), each sentence of the answer starts with when it was said: "[0:41–0:44]".
 */
import type { AnswerInput, AnswerOutput } from '../engine'
import { clockTime, type TimedSentence } from '../sentences'
import { isContentWord, splitSentences, stem, terms as termsOf } from '../text'
import { WORD_RE } from './analysis'

export const NO_ANSWER = 'The transcript does not appear to answer this question.'
const MAX_ANSWER_SENTENCES = 3

/** The sentences of a passage that answer, with how many of the question's terms the best contains. */
function answerFrom(text: string, q: Set<string>): { sentences: string[]; hits: number } {
  const sentences = splitSentences(text)
  if (!sentences.length) return { sentences: [], hits: 0 }
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
  if (!hits[best]) return { sentences: [], hits: 0 }
  // the best sentence, with its neighbours when they speak of the question too (or it is very short)
  let from = best
  let to = best
  if (best > 0 && hits[best - 1]! > 0) from = best - 1
  if (best + 1 < sentences.length && (hits[best + 1]! > 0 || sentences[best]!.text.length < 60)) to = best + 1
  return { sentences: sentences.slice(from, to + 1).map(s => s.text), hits: hits[best]! }
}

/**
 * "[0:41–0:44] We decided…" (with "Maria: " before it when speakers are known): the times of the timed sentence the answer's sentence is, or of the run
 * of consecutive ones it joins (the text splitter keeps "…through a. Survey…" together).
 */
function withTimes(sentences: string[], timed: readonly TimedSentence[] | undefined): string[] {
  if (!timed?.length) return sentences
  const starts = new Map<string, number[]>()
  timed.forEach((t, i) => starts.set(t.text, [...(starts.get(t.text) ?? []), i]))
  return sentences.map(s => {
    for (const [key, at] of starts) {
      if (!s.startsWith(key)) continue
      for (const i of at) {
        let joined = timed[i]!.text
        let j = i
        while (joined.length < s.length && j + 1 < timed.length) joined += ` ${timed[++j]!.text}`
        if (joined !== s) continue
        // who said it, when the transcript was diarized ("[0:41–0:44] Maria: We decided…"); a run
        // that two people said names each before their part
        const run = timed.slice(i, j + 1)
        const said = run.every(t => !t.speaker)
          ? s
          : run.every(t => t.speaker === run[0]!.speaker)
            ? `${run[0]!.speaker}: ${s}`
            : run.map(t => (t.speaker ? `${t.speaker}: ${t.text}` : t.text)).join(' ')
        return `[${clockTime(timed[i]!.start)}–${clockTime(timed[j]!.end)}] ${said}`
      }
    }
    return s
  })
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
  if (!q.size) return { answer: NO_ANSWER }
  const first = answerFrom(best.text, q)
  if (!first.hits) return { answer: NO_ANSWER }
  const parts = [first.sentences]
  // the best passage has under half of the question's terms: say so, and show it anyway
  const inBest = new Set(termsOf(best.text))
  let covered = 0
  for (const t of q) if (inBest.has(t)) covered++
  const weak = q.size >= 3 && covered / q.size < 0.5
  const second = passages[1]
  if (second && second.score >= 0.9 * best.score && first.sentences.length < MAX_ANSWER_SENTENCES) {
    const overlaps = second.offset < best.offset + best.text.length && best.offset < second.offset + second.text.length
    const extra = answerFrom(second.text, q)
    const joined = first.sentences.join(' ')
    const fresh = extra.sentences.filter(s => !joined.includes(s)).slice(0, MAX_ANSWER_SENTENCES - first.sentences.length)
    if (!overlaps && extra.hits > 0 && fresh.length) parts.push(fresh)
  }
  const answer = parts.map(p => withTimes(p, input.sentences).join(' ')).join(' … ')
  return { answer: weak ? `${NO_ANSWER} The closest passage: ${answer}` : answer }
}
