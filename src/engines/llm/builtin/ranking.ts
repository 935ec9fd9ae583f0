/**
 * Choosing sentences and words from an analysed text: TextRank over a bounded candidate set, maximal
 * marginal relevance for the pick, the most distinctive keywords of a segment (two that occur side by
 * side joined as a phrase), and the title.
 */
import { GENERIC_TERMS } from '../text'
import { cosine, stripEnd, type Analysis, type Unit } from './analysis'

export const UNTITLED = 'Untitled recording'

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
export function pick(pool: Unit[], count: number, opts: { candidates?: number; perSegment?: number; avoid?: Unit[] } = {}): Unit[] {
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

export const inOrder = (us: Unit[]) => [...us].sort((a, b) => a.i - b.i)

export function summaryCount(n: number): number {
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
export function keywords(a: Analysis, segmentIndex: number | null, k: number): string[] {
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

export function joinKeywords(ks: string[]): string {
  if (!ks.length) return ''
  const s = ks.length === 1 ? ks[0]! : `${ks.slice(0, -1).join(', ')} and ${ks[ks.length - 1]}`
  return s.charAt(0).toUpperCase() + s.slice(1)
}

export function titleOf(a: Analysis, top: Unit | undefined): string {
  if (!top) return UNTITLED
  const words = top.out.split(/\s+/)
  if (words.length <= 10 && !top.out.endsWith('?')) return stripEnd(top.out)
  const ks = keywords(a, null, 3)
  return ks.length ? joinKeywords(ks) : `${words.slice(0, 8).join(' ')}…`
}

/**
 * The title of a transcript whose sentences were cut from word times: keywords of misheard words
 * read as nonsense ("Write, arctic and bar"), so the title is the first summary sentence of 3 to 10
 * words, else the opening words of the best one.
 */
export function spokenTitleOf(summary: Unit[]): string {
  if (!summary.length) return UNTITLED
  const short = inOrder(summary).find(u => u.words >= 3 && u.words <= 10)
  if (short) return stripEnd(short.out)
  const words = stripEnd(summary[0]!.out).split(/\s+/)
  return words.length <= 8 ? words.join(' ') : `${words.slice(0, 8).join(' ')}…`
}
