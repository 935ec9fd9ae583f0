/**
 * The builtin LLM engine: offline, no model, deterministic. It makes notesvc useful on a machine with
 * no Ollama.
 *
 * Summaries are extractive: the summary, bullets and section points are sentences of the text itself,
 * chosen by a ranking that scales to long inputs (a 500,000-character transcript in well under two
 * seconds):
 *
 * 1. sentences are split (speaker labels such as "Maria:" kept aside) and turned into TF-IDF vectors
 *    over stemmed content terms;
 * 2. the text is cut into topic segments with TextTiling: the cosine similarity between the sentences
 *    before and after each gap (sliding blocks, so linear time); the gaps where the vocabulary changes
 *    most become section boundaries;
 * 3. every sentence gets a centrality score: cosine similarity to its segment's centroid and to the
 *    whole text's centroid, weighted for length (fragments and rambling sentences lose) and questions;
 * 4. only a bounded candidate set (the best 150 of the whole text, or 60 of a section) is ranked with
 *    TextRank (PageRank over sentence similarity), so the quadratic step never sees more than 150
 *    sentences whatever the length of the text;
 * 5. sentences are picked from the candidates by maximal marginal relevance (a good score, little
 *    overlap with what was already picked, here or in an earlier section), and shown in their
 *    original order, with hesitations ("um") and leading "so", "okay"… removed.
 *
 * Words that say little about a topic ("week", "start", "percent": GENERIC_TERMS) count for less, and
 * sentences with few content words ("let us get started") rank lower.
 *
 * Per style: `note` has the summary and one section per topic segment (heading: the segment's most
 * distinctive terms, two that occur side by side joined as a phrase; points: its best sentences);
 * `bulletpoints` has a few more sentences than the summary, and its `summary` is them as a Markdown
 * list; `transcript` keeps `input.segments` (start, end, trimmed text) and its `summary` is the whole
 * text; with no segments given the list is empty, since times cannot be made up. The title is the
 * best sentence when it has at most ten words, else the text's top keywords ("Image cache, crash and
 * launch").
 *
 * Meeting notes add attendees (speaker labels, "Maria said", "thanks, Tom", "Lars will"), decisions
 * (cue phrases such as "we decided", "agreed to", "the decision is") and action items ("action item:",
 * "todo", "Tom will", "I'll", "needs to"), with the owner and the due date when stated.
 *
 * Answers are extractive too: from the passages retrieval found (see retrieval.ts), the sentences of
 * the best passage that contain the question's terms, with the next-best passage when it scores
 * almost as well.
 */
import type { AnswerInput, AnswerOutput, LlmEngine, StyleId, SummaryInput, SummaryOutput } from './engine'
import { GENERIC_TERMS, isContentWord, looksLikeName, splitSentences, stem, terms as termsOf, type Sentence } from './text'

export const NO_ANSWER = 'The transcript does not appear to answer this question.'
export const UNTITLED = 'Untitled recording'

type Vec = Map<string, number>

interface Unit {
  i: number
  s: Sentence
  /** the sentence as shown in a summary: fillers and leading discourse markers removed */
  out: string
  words: number
  /** distinct content terms */
  distinct: number
  vec: Vec
  norm: number
  segment: number
  base: number
}

interface Analysis {
  units: Unit[]
  /** [first, end) sentence indices of each topic segment */
  segments: [number, number][]
  idf: Map<string, number>
  /** per term: how often it occurs in the whole text, and per segment */
  docTf: Map<string, number>
  segTf: Map<string, number>[]
  /** the most frequent spelling of each term, to show keywords in headings and titles */
  surface: Map<string, Map<string, number>>
  /** how often two content terms follow each other ("image cache"), keyed "a b" */
  pairs: Map<string, number>
}

const WORD_RE = /[\p{L}\p{M}\p{N}]+(?:[.,]\p{N}+)*/gu

function cosine(a: Vec, an: number, b: Vec, bn: number): number {
  if (!an || !bn) return 0
  let dot = 0
  if (a.size > b.size) [a, b] = [b, a]
  for (const [t, w] of a) {
    const v = b.get(t)
    if (v !== undefined) dot += w * v
  }
  return dot / (an * bn)
}

function normOf(v: Vec): number {
  let s = 0
  for (const w of v.values()) s += w * w
  return Math.sqrt(s)
}

/** Remove hesitations and leading discourse markers ("So, um, we decided" → "We decided"). */
export function cleanSentence(s: string): string {
  let t = s.replace(/(^|[\s,])(?:u+m+|u+h+|uhm|erm|e+h|hmm+|mm+)(?=[\s,.!?]|$)[,.]?/gi, '$1').trim()
  t = t.replace(/^(?:(?:so|and|but|okay|ok|well|yeah|yes|right|now|also|alright|oh|like|you know|I mean)\b[,]?\s+)+/i, '')
  t = t.replace(/\s+([,.!?])/g, '$1').replace(/\s{2,}/g, ' ').replace(/^[\s,;:-]+/, '').trim()
  if (!/[\p{L}\p{N}]/u.test(t)) return s.trim()
  return t.charAt(0).toUpperCase() + t.slice(1)
}

/** weight of a generic term (see GENERIC_TERMS) relative to a topical one */
const GENERIC_WEIGHT = 0.3

/** Fragments, rambling sentences and sentences with little content ("let us get started") rank lower. */
function shapeFactor(words: number, distinct: number): number {
  let f = words < 4 ? 0.15 : words < 7 ? 0.6 : words <= 40 ? 1 : 0.8
  if (distinct < 3) f *= 0.3
  else if (distinct < 5) f *= 0.75
  return f
}

/** How many topic sections a text of n sentences gets. */
function sectionCount(n: number): number {
  if (n < 12) return 1
  return Math.min(8, Math.round(Math.sqrt(n / 3)))
}

/** Sentences, their TF-IDF vectors, topic segments and centrality scores. */
function analyze(text: string): Analysis {
  const sentences = splitSentences(text)
  const n = sentences.length
  const tfs: Map<string, number>[] = []
  const df = new Map<string, number>()
  const docTf = new Map<string, number>()
  const surface = new Map<string, Map<string, number>>()
  const pairs = new Map<string, number>()
  const wordCounts: number[] = []
  for (const s of sentences) {
    const tf = new Map<string, number>()
    let count = 0
    let prev: string | null = null
    let prevEnd = -1
    for (const m of s.body.matchAll(WORD_RE)) {
      count++
      const raw = m[0]
      const lower = raw.toLowerCase().replace(/,/g, '')
      if (!isContentWord(lower)) {
        prev = null
        continue
      }
      const t = stem(lower)
      // adjacent only when nothing but a space or a hyphen separates them
      if (prev !== null && prev !== t && /^[\s-]$/.test(s.body.slice(prevEnd, m.index))) {
        const key = `${prev} ${t}`
        pairs.set(key, (pairs.get(key) ?? 0) + 1)
      }
      prev = t
      prevEnd = m.index + raw.length
      tf.set(t, (tf.get(t) ?? 0) + 1)
      let forms = surface.get(t)
      if (!forms) surface.set(t, (forms = new Map()))
      forms.set(raw, (forms.get(raw) ?? 0) + 1)
    }
    for (const [t, c] of tf) {
      df.set(t, (df.get(t) ?? 0) + 1)
      docTf.set(t, (docTf.get(t) ?? 0) + c)
    }
    tfs.push(tf)
    wordCounts.push(count)
  }
  const idf = new Map<string, number>()
  for (const [t, d] of df) idf.set(t, Math.log((n + 1) / d) + (n > 1 ? 0 : 1))
  const units: Unit[] = sentences.map((s, i) => {
    const vec: Vec = new Map()
    const tf = tfs[i]!
    for (const [t, c] of tf) vec.set(t, (1 + Math.log(c)) * idf.get(t)! * (GENERIC_TERMS.has(t) ? GENERIC_WEIGHT : 1))
    return { i, s, out: cleanSentence(s.body), words: wordCounts[i]!, distinct: tf.size, vec, norm: normOf(vec), segment: 0, base: 0 }
  })

  const segments = segment(text, units, sectionCount(n))
  segments.forEach(([a, b], k) => {
    for (let i = a; i < b; i++) units[i]!.segment = k
  })

  // centroids of unit-length sentence vectors, per segment and for the whole text
  const docCentroid: Vec = new Map()
  const segCentroids: Vec[] = segments.map(() => new Map())
  const segTf: Map<string, number>[] = segments.map(() => new Map())
  for (const u of units) {
    if (!u.norm) continue
    const c = segCentroids[u.segment]!
    const stf = segTf[u.segment]!
    for (const [t, w] of u.vec) {
      const x = w / u.norm
      c.set(t, (c.get(t) ?? 0) + x)
      docCentroid.set(t, (docCentroid.get(t) ?? 0) + x)
      stf.set(t, (stf.get(t) ?? 0) + tfs[u.i]!.get(t)!)
    }
  }
  const docNorm = normOf(docCentroid)
  const segNorms = segCentroids.map(normOf)
  for (const u of units) {
    const local = cosine(u.vec, u.norm, segCentroids[u.segment]!, segNorms[u.segment]!)
    const global = cosine(u.vec, u.norm, docCentroid, docNorm)
    let score = (0.5 * local + 0.5 * global) * shapeFactor(u.words, u.distinct)
    if (/\?["'”’)]*$/.test(u.s.body)) score *= 0.6
    u.base = score
  }
  return { units, segments, idf, docTf, segTf, surface, pairs }
}

/**
 * TextTiling in linear time: the similarity of the `w` sentences before and after each gap, with
 * sliding sums; the `m - 1` deepest valleys (at least `minSeg` sentences apart) become boundaries. A
 * blank line between two sentences makes a gap a little more likely to be chosen.
 */
function segment(text: string, units: Unit[], m: number): [number, number][] {
  const n = units.length
  if (m <= 1 || n < 4) return [[0, n]]
  const w = Math.max(2, Math.min(25, Math.round(n / (m * 6))))
  const minSeg = Math.max(3, Math.floor(n / (m * 2)))
  const left: Vec = new Map()
  const right: Vec = new Map()
  const sq = { left: 0, right: 0 }
  const add = (block: Vec, side: 'left' | 'right', u: Unit, sign: 1 | -1) => {
    if (!u.norm) return
    for (const [t, x] of u.vec) {
      const v = block.get(t) ?? 0
      const nv = v + (sign * x) / u.norm
      sq[side] += nv * nv - v * v
      if (Math.abs(nv) < 1e-12) block.delete(t)
      else block.set(t, nv)
    }
  }
  add(left, 'left', units[0]!, 1)
  for (let i = 1; i < Math.min(n, 1 + w); i++) add(right, 'right', units[i]!, 1)
  const sims = new Float64Array(n) // sims[g]: gap between g-1 and g
  for (let g = 1; g < n; g++) {
    if (g > 1) {
      add(left, 'left', units[g - 1]!, 1)
      if (g - 1 - w >= 0) add(left, 'left', units[g - 1 - w]!, -1)
      add(right, 'right', units[g - 1]!, -1)
      if (g - 1 + w < n) add(right, 'right', units[g - 1 + w]!, 1)
    }
    sims[g] = cosine(left, Math.sqrt(Math.max(0, sq.left)), right, Math.sqrt(Math.max(0, sq.right)))
    const between = text.slice(units[g - 1]!.s.end, units[g]!.s.start)
    if (/\n\s*\n/.test(between)) sims[g] = sims[g]! - 0.1
  }
  // smooth, then take the lowest valleys
  const gaps: { g: number; v: number }[] = []
  for (let g = minSeg; g <= n - minSeg; g++) {
    const a = sims[Math.max(1, g - 1)]!
    const c = sims[Math.min(n - 1, g + 1)]!
    gaps.push({ g, v: (a + 2 * sims[g]! + c) / 4 })
  }
  gaps.sort((x, y) => x.v - y.v || x.g - y.g)
  const cuts: number[] = []
  for (const { g } of gaps) {
    if (cuts.length >= m - 1) break
    if (cuts.every(c => Math.abs(c - g) >= minSeg)) cuts.push(g)
  }
  cuts.sort((a, b) => a - b)
  const out: [number, number][] = []
  let from = 0
  for (const c of cuts) {
    out.push([from, c])
    from = c
  }
  out.push([from, n])
  return out
}

/** PageRank over the cosine-similarity graph of a few candidates. */
function textRank(cands: Unit[]): { pr: Float64Array; sim: Float64Array } {
  const M = cands.length
  const sim = new Float64Array(M * M)
  const rowSum = new Float64Array(M)
  for (let a = 0; a < M; a++) {
    for (let b = a + 1; b < M; b++) {
      const s = cosine(cands[a]!.vec, cands[a]!.norm, cands[b]!.vec, cands[b]!.norm)
      sim[a * M + b] = s
      sim[b * M + a] = s
      rowSum[a] = rowSum[a]! + s
      rowSum[b] = rowSum[b]! + s
    }
  }
  const d = 0.85
  let pr = new Float64Array(M).fill(1 / Math.max(1, M))
  for (let it = 0; it < 50; it++) {
    const next = new Float64Array(M).fill((1 - d) / Math.max(1, M))
    for (let j = 0; j < M; j++) {
      if (!rowSum[j]) continue
      const share = (d * pr[j]!) / rowSum[j]!
      for (let i = 0; i < M; i++) {
        const s = sim[j * M + i]!
        if (s) next[i] = next[i]! + s * share
      }
    }
    let delta = 0
    for (let i = 0; i < M; i++) delta += Math.abs(next[i]! - pr[i]!)
    pr = next
    if (delta < 1e-9) break
  }
  return { pr, sim }
}

/**
 * Pick `count` sentences from `pool`: TextRank over the pool's best candidates, then maximal marginal
 * relevance. Returns them best first.
 */
function pick(pool: Unit[], count: number, opts: { candidates?: number; perSegment?: number; avoid?: Unit[] } = {}): Unit[] {
  if (count <= 0 || !pool.length) return []
  const cands = pool
    .filter(u => u.out.length > 0)
    .sort((a, b) => b.base - a.base || a.i - b.i)
    .slice(0, Math.max(count, opts.candidates ?? 150))
  const M = cands.length
  const { pr, sim } = textRank(cands)
  let maxBase = 0
  let maxPr = 0
  for (let i = 0; i < M; i++) {
    maxBase = Math.max(maxBase, cands[i]!.base)
    maxPr = Math.max(maxPr, pr[i]!)
  }
  const score = cands.map((u, i) => 0.6 * (maxBase ? u.base / maxBase : 0) + 0.4 * (maxPr ? pr[i]! / maxPr : 0))
  const chosen: number[] = []
  const excluded = new Uint8Array(M)
  const perSegment = new Map<number, number>()
  // similarity to sentences already used elsewhere (earlier sections of a note)
  const avoided = cands.map(u => {
    let s = 0
    for (const v of opts.avoid ?? []) s = Math.max(s, cosine(u.vec, u.norm, v.vec, v.norm))
    return s
  })
  const lambda = 0.6
  while (chosen.length < count) {
    let best = -1
    let bestValue = -Infinity
    for (let i = 0; i < M; i++) {
      if (excluded[i]) continue
      let redundancy = avoided[i]!
      for (const c of chosen) redundancy = Math.max(redundancy, sim[i * M + c]!)
      if (redundancy > 0.5) {
        excluded[i] = 1
        continue
      }
      if (opts.perSegment && (perSegment.get(cands[i]!.segment) ?? 0) >= opts.perSegment) continue
      const value = lambda * score[i]! - (1 - lambda) * redundancy
      if (value > bestValue) {
        bestValue = value
        best = i
      }
    }
    if (best < 0 && !chosen.length) {
      // everything here repeats what was picked elsewhere: still give the best one
      for (let i = 0; i < M; i++) if (best < 0 || score[i]! > score[best]!) best = i
    }
    if (best < 0) break
    chosen.push(best)
    excluded[best] = 1
    const seg = cands[best]!.segment
    perSegment.set(seg, (perSegment.get(seg) ?? 0) + 1)
  }
  return chosen.map(i => cands[i]!)
}

const inOrder = (us: Unit[]) => [...us].sort((a, b) => a.i - b.i)

function summaryCount(n: number): number {
  if (n <= 3) return n
  return Math.min(Math.ceil(n / 2), Math.max(3, Math.min(10, Math.round(3 + Math.log2(n / 4)))))
}

/** The best spelling of a term: its most frequent form, lower case on a tie. */
function spelling(a: Analysis, t: string): string {
  const forms = a.surface.get(t)
  if (!forms) return t
  let best = t
  let bestCount = -1
  for (const [f, c] of forms) {
    if (c > bestCount || (c === bestCount && f === f.toLowerCase())) {
      best = f
      bestCount = c
    }
  }
  // a word capitalized only because it starts sentences is shown in lower case
  const lower = forms.get(best.toLowerCase()) ?? 0
  return lower > 0 && lower * 3 >= bestCount ? best.toLowerCase() : best
}

/** The most distinctive terms of a segment (or of the whole text when segment is null). */
function keywords(a: Analysis, segmentIndex: number | null, k: number): string[] {
  const tf = segmentIndex === null ? a.docTf : a.segTf[segmentIndex]!
  const distinct = segmentIndex !== null && a.segments.length > 1
  const scored: { t: string; v: number }[] = []
  for (const [t, c] of tf) {
    if (/^\d/.test(t) || t.length < 3) continue
    const idf = a.idf.get(t) ?? 0
    // a word said once is rarely what a part is about
    // generic words only when nothing else is left; a word said once is rarely what a part is about
    let v = c * idf * (GENERIC_TERMS.has(t) ? 0.01 : 1) * (c >= 2 ? 1 : 0.4)
    if (distinct) v *= Math.sqrt(c / (a.docTf.get(t) ?? c))
    scored.push({ t, v })
  }
  scored.sort((x, y) => y.v - x.v || (x.t < y.t ? -1 : x.t > y.t ? 1 : 0))
  // two top terms that mostly occur side by side make one phrase ("image cache")
  const top = scored.slice(0, 2 * k).map(x => x.t)
  const used = new Set<string>()
  const out: string[] = []
  for (const t of top) {
    if (out.length >= k) break
    if (used.has(t)) continue
    used.add(t)
    let phrase = spelling(a, t)
    for (const u of top) {
      if (used.has(u)) continue
      const together = Math.max(a.pairs.get(`${t} ${u}`) ?? 0, a.pairs.get(`${u} ${t}`) ?? 0)
      const least = Math.min(a.docTf.get(t) ?? 0, a.docTf.get(u) ?? 0)
      if (together >= 2 && together >= 0.5 * least) {
        used.add(u)
        const first = (a.pairs.get(`${t} ${u}`) ?? 0) >= (a.pairs.get(`${u} ${t}`) ?? 0)
        phrase = first ? `${phrase} ${spelling(a, u)}` : `${spelling(a, u)} ${phrase}`
        break
      }
    }
    out.push(phrase)
  }
  return out
}

function joinKeywords(ks: string[]): string {
  if (!ks.length) return ''
  const s = ks.length === 1 ? ks[0]! : `${ks.slice(0, -1).join(', ')} and ${ks[ks.length - 1]}`
  return s.charAt(0).toUpperCase() + s.slice(1)
}

const stripEnd = (s: string) => s.replace(/[\s.,;:!?…]+$/, '')

function titleOf(a: Analysis, top: Unit | undefined): string {
  if (!top) return UNTITLED
  const words = top.out.split(/\s+/)
  if (words.length <= 10 && !top.out.endsWith('?')) return stripEnd(top.out)
  const ks = keywords(a, null, 3)
  return ks.length ? joinKeywords(ks) : `${words.slice(0, 8).join(' ')}…`
}

// ---- meeting notes ----

const DEPARTMENTS = new Set(
  'Marketing Sales Engineering Finance Legal Support Product Design Operations Ops HR IT QA Security Procurement Facilities Accounting Logistics'.split(' '),
)
const NAME = String.raw`\p{Lu}[\p{Ll}\p{M}'’-]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+)?`
const SAID_RE = new RegExp(
  String.raw`(?:^|[^\p{L}])(?<!\p{Lu}[\p{L}'’-]* )(${NAME}) (?:said|says|asked|asks|mentioned|suggested|proposed|noted|added|explained|replied|reported|presented|pointed out|confirmed|volunteered|argued|wondered|joined|commented|answered|recommended)\b`,
  'gu',
)
const WEAK_NAME_RE = new RegExp(String.raw`(?:^|[^\p{L}])(?<!\p{Lu}[\p{L}'’-]* )(${NAME}) (?:will|'ll|’ll|agreed|is going to|needs to|has to|to \p{Ll}+)\b`, 'gu')
const VOCATIVE_RE = new RegExp(
  String.raw`(?:\b(?:thanks|thank you|cheers|hi|hello|over to you|welcome),? (${NAME})\b|^(${NAME}), (?:can|could|would|will|do|did|are|is|what|how|any|please)\b|\b(?:I'm|I am|my name is|this is) (${NAME})\b)`,
  'gu',
)
const LIST_RE = /^(?:attendees|present|participants|in attendance|attending)\s*:\s*(.+)$/i

const DECISION_RE =
  /\b(?:we(?:'ve|’ve| have)?|they|the (?:team|board|group|committee|client)|everyone|everybody|all of us|it was|it's been|it has been)\s+(?:all\s+|finally\s+|just\s+|unanimously\s+|now\s+)?(?:decided|agreed|resolved|voted|chose|settled|approved|signed off)\b|\bagreed (?:to|that|on)\b|\bthe (?:final )?decision (?:is|was|here is)\b|\bdecision\s*:|\bdecided (?:to|that|on|against)\b|\blet'?s go with\b|\bwe(?:'re|’re| are) going (?:to go )?with\b|\bwe(?:'ll|’ll| will) go with\b|\b(?:is|was|were|are|been|got) (?:approved|signed off)\b/i

const WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday'
const MONTH = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec'
const DUE_PHRASE =
  `(?:the\\s+)?end of (?:the\\s+|this\\s+|next\\s+)?(?:day|week|month|quarter|year|sprint)|(?:this|next)\\s+(?:week|month|quarter|year|sprint|${WEEKDAY})|` +
  `tomorrow(?: morning| afternoon| evening)?|tonight|today|eod|eow|cob|${WEEKDAY}(?: morning| afternoon| evening)?|` +
  `(?:${MONTH})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?|(?:the\\s+)?\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?(?:${MONTH})|the\\s+\\d{1,2}(?:st|nd|rd|th)|` +
  `(?:the\\s+)?next (?:meeting|call|review|standup|stand-up)|q[1-4]|week \\d{1,2}|\\d{4}-\\d{2}-\\d{2}|\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?`
const DUE_RE = new RegExp(`\\b(?:(?:by|before|until|till|due|no later than|on)\\s+(${DUE_PHRASE})|((?:the\\s+)?end of (?:the\\s+|this\\s+|next\\s+)?(?:day|week|month|quarter|year)|(?:this|next)\\s+(?:week|month|${WEEKDAY})|tomorrow|tonight|eod|eow))\\b`, 'i')

const COMMIT =
  String.raw`(?:will|'ll|’ll|shall|is going to|are going to|am going to|'m going to|’m going to|'re going to|’re going to|needs? to|has to|have to|must|agreed to|volunteered to|offered to|promised to|is responsible for|(?:will |can )?take care of|takes care of)`
const ACTION_LABEL_RE = /\b(?:action items?|action points?|to-?dos?|next steps?)\b\s*(?:for\s+(\p{Lu}[\p{Ll}\p{M}'’-]+(?: \p{Lu}[\p{Ll}\p{M}'’-]+)?))?\s*[:\-–—]\s*(.+)$/iu
const SUBJECT_RE = new RegExp(
  String.raw`(?:^|[,;:]\s+|\b(?:and|so|then|also|okay|ok|right|sure)\s+)(${NAME}|I|we|We)(?:\s+(?:also|then|just))?\s*(${COMMIT})\s+(.+)$`,
  'u',
)
const ASK_RE = new RegExp(String.raw`^(${NAME}),?\s+(?:can|could|would) you(?: please)?\s+(.+)$`, 'u')
const MINUTES_RE = new RegExp(String.raw`^(${NAME}) to (\p{Ll}+\b.*)$`, 'u')
const NOT_TASKS = new Set(['be', 'say', 'admit', 'guess', 'bet', 'see', 'probably', 'never', 'not', 'always', 'still', 'find', 'need', 'get', 'have'])

export interface ActionItem {
  task: string
  owner: string | null
  due: string | null
}

function splitDue(task: string): { task: string; due: string | null } {
  const m = DUE_RE.exec(task)
  if (!m) return { task, due: null }
  const phrase = (m[1] ?? m[2] ?? '').trim()
  const rest = (task.slice(0, m.index) + task.slice(m.index + m[0].length)).replace(/\s{2,}/g, ' ').replace(/\s+([,.!?])/g, '$1')
  return { task: rest, due: phrase || null }
}

function tidyTask(s: string): string {
  let t = stripEnd(s.trim()).replace(/^(?:please|also|then|just)\s+/i, '').replace(/[,;]\s*(?:please|okay|ok|right)$/i, '')
  t = stripEnd(t)
  return t.charAt(0).toUpperCase() + t.slice(1)
}

function firstWord(s: string): string {
  return (s.trim().split(/\s+/)[0] ?? '').toLowerCase().replace(/[^\p{L}]/gu, '')
}

const PLACE_PREPOSITIONS = new Set(['in', 'at', 'from', 'near', 'across', 'via', 'into', 'inside', 'outside', 'between', 'towards', 'toward', 'through', 'of'])

/**
 * Names of people in the text, in order of first appearance. When the text has speaker labels, the
 * attendees are the labelled speakers, the names of an "Attendees:" line and the people addressed
 * ("Tom, can you…", "thanks, Maria"): someone only spoken about ("Maria said") may well be absent.
 * Without labels, "Maria said"-style cues count too, and "Lars will…" when Lars is also written with a
 * capital in the middle of a sentence; words that mostly follow "in", "at", "from"… are places.
 * `known` holds every name found by any cue (owners of action items are checked against it).
 */
function findAttendees(units: Unit[]): { attendees: string[]; known: Set<string>; capitalizedMidSentence: Set<string> } {
  const labels = new Map<string, number>()
  const strong = new Map<string, number>()
  const reported = new Map<string, number>()
  const weak = new Map<string, number>()
  const capitalizedMidSentence = new Set<string>()
  const seen = new Map<string, number>()
  const afterPreposition = new Map<string, number>()
  // Words also written in lower case somewhere are ordinary words, capitalized only to start a sentence.
  const lowerWords = new Set<string>()
  const note = (m: Map<string, number>, name: string, at: number) => {
    if (looksLikeName(name) && !m.has(name)) m.set(name, at)
  }
  for (const u of units) {
    const body = u.s.body
    if (u.s.speaker && looksLikeName(u.s.speaker)) note(labels, u.s.speaker, u.i)
    const list = LIST_RE.exec(body)
    if (list) for (const p of list[1]!.split(/\s*(?:,|;|\band\b|&)\s*/)) note(strong, stripEnd(p.trim()), u.i)
    for (const m of body.matchAll(VOCATIVE_RE)) note(strong, (m[1] ?? m[2] ?? m[3])!, u.i)
    for (const m of body.matchAll(SAID_RE)) note(reported, m[1]!, u.i)
    for (const m of body.matchAll(WEAK_NAME_RE)) note(weak, m[1]!, u.i)
    for (const m of body.matchAll(/(?<![\p{L}])\p{Ll}[\p{Ll}\p{M}'’-]*/gu)) lowerWords.add(m[0])
    for (const m of body.matchAll(/\p{Lu}[\p{Ll}\p{M}'’-]+/gu)) {
      const word = m[0]
      seen.set(word, (seen.get(word) ?? 0) + 1)
      const before = /([\p{L}\p{N},;:]+)\s+$/u.exec(body.slice(Math.max(0, m.index - 16), m.index))?.[1]
      if (!before) continue
      if (/^[\p{Ll}\p{N}]/u.test(before) || /[,;:]$/.test(before)) capitalizedMidSentence.add(word)
      if (PLACE_PREPOSITIONS.has(before.toLowerCase())) afterPreposition.set(word, (afterPreposition.get(word) ?? 0) + 1)
    }
  }
  const place = (name: string) => {
    const first = name.split(' ')[0]!
    return (afterPreposition.get(first) ?? 0) >= 0.3 * (seen.get(first) ?? 1)
  }
  /** earliest first: a later sighting never moves a name down the list */
  const merged = (...maps: Map<string, number>[]) => {
    const out = new Map<string, number>()
    for (const m of maps) for (const [k, v] of m) out.set(k, Math.min(v, out.get(k) ?? v))
    return out
  }
  const known = merged(labels, strong)
  for (const [name, at] of [...reported, ...weak]) {
    if (known.has(name) || place(name)) continue
    const parts = name.split(' ')
    if (reported.has(name) || parts.some(p => capitalizedMidSentence.has(p)) || parts.every(p => !lowerWords.has(p.toLowerCase()))) known.set(name, at)
  }
  const labelled = labels.size >= 2
  const chosen = labelled ? merged(labels, strong) : known
  for (const name of [...chosen.keys()]) if (!labels.has(name) && place(name)) chosen.delete(name)
  // "Maria" and "Maria Lopez" are one person
  const names = [...chosen.entries()].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([n]) => n)
  const full = names.filter(n => n.includes(' '))
  const attendees = names.filter(n => n.includes(' ') || !full.some(f => f.startsWith(`${n} `))).slice(0, 50)
  return { attendees, known: new Set(known.keys()), capitalizedMidSentence }
}

function ownerOk(name: string, known: Set<string>, mid: Set<string>): boolean {
  if (DEPARTMENTS.has(name)) return true
  if (!looksLikeName(name)) return false
  return known.has(name) || name.split(' ').every(p => mid.has(p))
}

function actionOf(u: Unit, known: Set<string>, mid: Set<string>): ActionItem | null {
  const body = cleanSentence(u.s.body)
  const speakerOwner = u.s.speaker && looksLikeName(u.s.speaker) ? u.s.speaker : null
  const labelled = ACTION_LABEL_RE.exec(body)
  if (labelled) {
    let owner: string | null = labelled[1] && ownerOk(labelled[1], known, mid) ? labelled[1] : null
    let rest = labelled[2]!
    const lead = new RegExp(String.raw`^(${NAME})(?:\s*[:,\-–—]\s*|\s+(?:to|will|should|needs? to|is going to|has to)\s+)(.+)$`, 'u').exec(rest)
    if (!owner && lead && ownerOk(lead[1]!, known, mid)) {
      owner = lead[1]!
      rest = lead[2]!
    }
    const { task, due } = splitDue(rest)
    const t = tidyTask(task)
    return t ? { task: t, owner, due } : null
  }
  const ask = ASK_RE.exec(body)
  if (ask && ownerOk(ask[1]!, known, mid) && !NOT_TASKS.has(firstWord(ask[2]!))) {
    const { task, due } = splitDue(ask[2]!.replace(/\?+$/, ''))
    const t = tidyTask(task)
    return t ? { task: t, owner: ask[1]!, due } : null
  }
  const minutes = MINUTES_RE.exec(body)
  if (minutes && ownerOk(minutes[1]!, known, mid)) {
    const { task, due } = splitDue(minutes[2]!)
    const t = tidyTask(task)
    return t ? { task: t, owner: minutes[1]!, due } : null
  }
  const sub = SUBJECT_RE.exec(body)
  if (sub) {
    const subject = sub[1]!
    const verb = sub[2]!.toLowerCase()
    const rest = sub[3]!
    if (NOT_TASKS.has(firstWord(rest)) || rest.trim().endsWith('?')) return null
    const { task, due } = splitDue(rest)
    let owner: string | null
    if (subject === 'I') owner = speakerOwner
    else if (subject === 'we' || subject === 'We') {
      // "we will…" is often just talk; keep it when it is an obligation or has a date
      if (!due && !/need|have to|must/.test(verb)) return null
      owner = null
    } else if (ownerOk(subject, known, mid)) owner = subject
    else return null
    const t = tidyTask(task)
    return t.split(/\s+/).length >= 2 ? { task: t, owner, due } : null
  }
  return null
}

/** Keep at most `max` items, the most central ones, in their original order. */
function capped<T>(items: { u: Unit; item: T }[], max: number): T[] {
  if (items.length <= max) return items.map(x => x.item)
  return [...items]
    .sort((a, b) => b.u.base - a.u.base || a.u.i - b.u.i)
    .slice(0, max)
    .sort((a, b) => a.u.i - b.u.i)
    .map(x => x.item)
}

export interface MeetingNotes {
  attendees: string[]
  decisions: string[]
  actionItems: ActionItem[]
}

const MAX_DECISIONS = 25
const MAX_ACTIONS = 30

function meetingNotes(units: Unit[]): MeetingNotes {
  const { attendees, known, capitalizedMidSentence } = findAttendees(units)
  const decisions: { u: Unit; item: string }[] = []
  const actions: { u: Unit; item: ActionItem }[] = []
  const seenD = new Set<string>()
  const seenA = new Set<string>()
  for (const u of units) {
    const action = actionOf(u, known, capitalizedMidSentence)
    // "Tom, can you send the notes?" "Sure, I'll send them by tomorrow.": one task, with its date
    const previous = actions[actions.length - 1]
    if (action && previous && u.i - previous.u.i <= 3 && /^\p{L}+ (?:it|them|that|this|those|these)$/iu.test(action.task)) {
      const p = previous.item
      if (p.owner === null || action.owner === null || p.owner === action.owner) {
        p.owner ??= action.owner
        p.due ??= action.due
        continue
      }
    }
    if (action) {
      const key = `${action.task.toLowerCase()}|${action.owner ?? ''}`
      if (!seenA.has(key)) {
        seenA.add(key)
        actions.push({ u, item: action })
      }
      // "Tom agreed to send the report" is Tom's task, not a decision of the meeting
      if (action.owner) continue
    }
    if (DECISION_RE.test(u.s.body) && !u.s.body.trim().endsWith('?')) {
      const d = stripEnd(cleanSentence(u.s.body)) + '.'
      const key = d.toLowerCase()
      if (!seenD.has(key)) {
        seenD.add(key)
        decisions.push({ u, item: d })
      }
    }
  }
  return { attendees, decisions: capped(decisions, MAX_DECISIONS), actionItems: capped(actions, MAX_ACTIONS) }
}

// ---- the engine ----

function summarizeText(input: SummaryInput, signal?: AbortSignal): SummaryOutput {
  const style: StyleId = input.styleId
  const a = analyze(input.text ?? '')
  signal?.throwIfAborted()
  const units = a.units
  const n = units.length
  const m = a.segments.length
  const count = summaryCount(n)
  // the summary: the best sentences of the whole text, a few from each section at most
  const top = pick(units, count, {
    candidates: 150,
    perSegment: m > 1 ? Math.ceil(count / m) + 1 : undefined,
  })
  const summarySentences = inOrder(top).map(u => u.out)
  const summary = summarySentences.join(' ')
  const title = titleOf(a, top[0])
  signal?.throwIfAborted()

  switch (style) {
    case 'transcript': {
      const segments = (input.segments ?? []).map(s => ({ start: s.start, end: s.end, text: s.text.trim() }))
      return { title, summary: (input.text ?? '').trim(), structuredContent: { transcript: { segments } } }
    }
    case 'bulletpoints': {
      const bulletCount = n <= 3 ? n : Math.min(n, count + 4, 14)
      const bullets = inOrder(
        pick(units, bulletCount, { candidates: 150, perSegment: m > 1 ? Math.ceil(bulletCount / m) + 1 : undefined }),
      ).map(u => u.out)
      return { title, summary: bullets.map(b => `- ${b}`).join('\n'), structuredContent: { bulletpoints: { bullets } } }
    }
    case 'meeting-notes': {
      const notes = meetingNotes(units)
      return { title, summary, structuredContent: { 'meeting-notes': { summary, ...notes } } }
    }
    default: {
      const used: Unit[] = []
      const sections = a.segments
        .map(([from, to], k) => {
          const pool = units.slice(from, to)
          const chosen = pick(pool, Math.max(1, Math.min(5, Math.ceil(pool.length / 5))), { candidates: 60, avoid: used })
          used.push(...chosen)
          const points = inOrder(chosen).map(u => u.out)
          const heading = joinKeywords(keywords(a, k, 3)) || (m > 1 ? `Part ${k + 1}` : 'Summary')
          return { heading, points }
        })
        .filter(s => s.points.length > 0)
      return { title, summary, structuredContent: { note: { summary, sections } } }
    }
  }
}

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

function answerQuestion(input: AnswerInput): AnswerOutput {
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

export function createBuiltinEngine(): LlmEngine {
  return {
    name: 'builtin',
    maxInputChars: Number.POSITIVE_INFINITY,
    async summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
      signal?.throwIfAborted()
      return summarizeText(input, signal)
    },
    async answer(input: AnswerInput, signal?: AbortSignal): Promise<AnswerOutput> {
      signal?.throwIfAborted()
      return answerQuestion(input)
    },
  }
}
