/**
 * Passage retrieval for questions about a transcript, usable by any engine: the transcript is cut into
 * passages of a few sentences (about 300–600 characters, consecutive passages sharing one sentence),
 * and the passages are ranked for a question with Okapi BM25 over content terms (lower-cased,
 * punctuation stripped, English stop words dropped, lightly stemmed), with a small bonus for
 * passages that contain the question's terms next to each other (phrases such as "loading bays").
 *
 * Deterministic: equal scores are ordered by position in the transcript. Linear in the length of the
 * text; a 500,000-character transcript is indexed in well under a second.
 */
import type { Passage } from './engine'
import { splitSentences, stem, terms, words, isContentWord, type Sentence } from './text'

export interface PassageOptions {
  /** a passage grows until it reaches this many characters (default 400) */
  targetChars?: number
  /** and does not grow past this many, unless one sentence alone is longer (default 600) */
  maxChars?: number
  /** the last sentence of a passage starts the next one when it is at most this long (default 200) */
  overlapChars?: number
}

export interface PassageSpan {
  text: string
  /** where the passage starts in the transcript, in characters */
  offset: number
  /** indices of its first and last sentence (inclusive) */
  first: number
  last: number
}

/** Group sentences into overlapping passages. */
function passagesFromSentences(text: string, sentences: readonly Sentence[], opts: PassageOptions = {}): PassageSpan[] {
  const target = opts.targetChars ?? 400
  const max = opts.maxChars ?? 600
  const overlap = opts.overlapChars ?? 200
  const out: PassageSpan[] = []
  const n = sentences.length
  let i = 0
  while (i < n) {
    let j = i
    let len = 0
    while (j < n) {
      const add = sentences[j]!.text.length + (j > i ? 1 : 0)
      if (j > i && len + add > max) break
      len += add
      j++
      if (len >= target) break
    }
    const first = sentences[i]!
    const last = sentences[j - 1]!
    out.push({ text: text.slice(first.start, last.end).replace(/\s+/g, ' ').trim(), offset: first.start, first: i, last: j - 1 })
    if (j >= n) break
    i = j - i >= 2 && last.text.length <= overlap ? j - 1 : j
  }
  return out
}

/**
 * Sentences for passages: text without punctuation (some ASR output) is cut into pieces short enough
 * that two make a passage, so consecutive passages still overlap.
 */
const PIECE_CHARS = 280

/** Split a transcript into passages of a few sentences. */
export function splitPassages(text: string, opts: PassageOptions = {}): PassageSpan[] {
  return passagesFromSentences(text, splitSentences(text, PIECE_CHARS), opts)
}

const K1 = 1.2
const B = 0.75
/** weight of the phrase bonus, relative to one query term's BM25 score */
const PHRASE_WEIGHT = 0.25

export interface PassageIndex {
  readonly passages: readonly PassageSpan[]
  /** the `k` best passages for a question, best first; only passages that match at least one term */
  search(question: string, k?: number): Passage[]
}

/** The question's terms, once each, in order, and its adjacent term pairs. */
export function queryOf(question: string): { terms: string[]; pairs: string[] } {
  const ts: string[] = []
  const pairs: string[] = []
  let prev: string | null = null
  for (const w of words(question)) {
    if (!isContentWord(w)) {
      prev = null
      continue
    }
    const t = stem(w)
    if (!ts.includes(t)) ts.push(t)
    if (prev !== null && prev !== t) pairs.push(`${prev} ${t}`)
    prev = t
  }
  return { terms: ts, pairs }
}

/** A passage found by `rankTermSequences`: its index in the sequences given, and its score. */
export interface RankedSequence {
  index: number
  score: number
}

/**
 * BM25 over passages given as their terms in order (`terms()` of each passage's text), with the phrase
 * bonus; `search` gives the `k` best for a question, best first, only those that match at least one
 * term (equal scores in the order given). `idf` is the weight of a term among these passages (the
 * weight of a term found in none: the highest there is), for callers that judge what a match covers.
 */
export function rankTermSequences(seq: readonly (readonly string[])[]): { search(question: string, k?: number): RankedSequence[]; idf(term: string): number } {
  const tf: Map<string, number>[] = []
  const lengths: number[] = []
  const df = new Map<string, number>()
  for (const all of seq) {
    const counts = new Map<string, number>()
    for (const t of all) counts.set(t, (counts.get(t) ?? 0) + 1)
    for (const t of counts.keys()) df.set(t, (df.get(t) ?? 0) + 1)
    tf.push(counts)
    lengths.push(all.length)
  }
  const N = seq.length
  const avgdl = N ? lengths.reduce((a, b) => a + b, 0) / N || 1 : 1
  const idf = (t: string) => {
    const d = df.get(t) ?? 0
    return Math.log(1 + (N - d + 0.5) / (d + 0.5))
  }

  return {
    idf,
    search(question: string, k = 5): RankedSequence[] {
      if (!N || k <= 0) return []
      const q = queryOf(question)
      const qt = q.terms.filter(t => df.has(t))
      if (!qt.length) return []
      const weights = qt.map(idf)
      const scored: { i: number; score: number }[] = []
      for (let i = 0; i < N; i++) {
        const counts = tf[i]!
        const norm = K1 * (1 - B + (B * lengths[i]!) / avgdl)
        let score = 0
        for (let j = 0; j < qt.length; j++) {
          const f = counts.get(qt[j]!)
          if (f) score += (weights[j]! * f * (K1 + 1)) / (f + norm)
        }
        if (score > 0) scored.push({ i, score })
      }
      // phrase bonus: query term pairs found next to each other in the passage (stop words skipped)
      if (q.pairs.length && scored.length) {
        const pairWeight = new Map<string, number>()
        for (const pair of q.pairs) {
          const [a, b] = pair.split(' ') as [string, string]
          if (df.has(a) && df.has(b)) pairWeight.set(pair, PHRASE_WEIGHT * (idf(a) + idf(b)) / 2)
        }
        if (pairWeight.size) {
          for (const s of scored) {
            const all = seq[s.i]!
            const seen = new Set<string>()
            for (let x = 1; x < all.length; x++) {
              const pair = `${all[x - 1]} ${all[x]}`
              const w = pairWeight.get(pair)
              if (w !== undefined && !seen.has(pair)) {
                seen.add(pair)
                s.score += w
              }
            }
          }
        }
      }
      scored.sort((a, b) => b.score - a.score || a.i - b.i)
      return scored.slice(0, k).map(({ i, score }) => ({ index: i, score: Math.round(score * 1e6) / 1e6 }))
    },
  }
}

/**
 * Build a BM25 index of a transcript's passages. Build it once and search it many times when several
 * questions are asked about the same text.
 */
export function indexPassages(text: string, opts: PassageOptions = {}): PassageIndex {
  const sentences = splitSentences(text, PIECE_CHARS)
  const passages = passagesFromSentences(text, sentences, opts)
  // terms per sentence, then per passage (sentences shared by two passages are tokenized once)
  const sentenceTerms = sentences.map(s => terms(s.text))
  const ranking = rankTermSequences(passages.map(p => {
    const all: string[] = []
    for (let s = p.first; s <= p.last; s++) all.push(...sentenceTerms[s]!)
    return all
  }))
  return {
    passages,
    search: (question: string, k = 5): Passage[] => ranking.search(question, k).map(({ index, score }) => ({
      text: passages[index]!.text,
      offset: passages[index]!.offset,
      score,
    })),
  }
}

/**
 * The `k` passages of a transcript that best match a question, best first (BM25). Passages that share
 * no term with the question are never returned, so an empty list means the transcript does not seem to
 * speak of it.
 */
export function retrievePassages(text: string, question: string, k = 5): Passage[] {
  return indexPassages(text).search(question, k)
}
