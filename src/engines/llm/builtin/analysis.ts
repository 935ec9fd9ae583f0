/**
 * The analysis every builtin summary starts from: sentences (speaker labels kept aside), their TF-IDF
 * vectors over stemmed content terms, topic segments found with TextTiling, and each sentence's
 * centrality score (similarity to its segment's and the whole text's centroid, weighted for shape).
 */
import { GENERIC_TERMS, isContentWord, splitSentences, stem, type Sentence } from '../text'

export type Vec = Map<string, number>

export interface Unit {
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

export interface Analysis {
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

export const WORD_RE = /[\p{L}\p{M}\p{N}]+(?:[.,]\p{N}+)*/gu

export function cosine(a: Vec, an: number, b: Vec, bn: number): number {
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

/** The text without trailing spaces and punctuation. */
export const stripEnd = (s: string) => s.replace(/[\s.,;:!?…]+$/, '')

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
export function analyze(text: string): Analysis {
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
