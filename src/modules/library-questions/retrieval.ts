/**
 * Passages across the library for a question: the notes the full-text index found are cut into
 * passages (a timed transcript's segments, consecutive ones of one speaker joined up to about 400
 * characters, keeping the first one's start and the last one's end; an untimed text by sentences), then
 * all of them ranked together with BM25 (engines/llm/retrieval.ts), a match in the note's title adding
 * a little to its passages. Pure: what the notes hold comes in as values.
 */
import type { TranscriptSegment } from '../../engines/asr/engine'
import { queryOf, rankTermSequences, splitPassages } from '../../engines/llm/retrieval'
import { GENERIC_TERMS, isContentWord, stem, terms, words } from '../../engines/llm/text'

export interface LibraryPassage {
  noteId: string
  title: string
  /** seconds; null for a note without times */
  start: number | null
  end: number | null
  speaker: string | null
  text: string
}

export interface RankedPassage extends LibraryPassage {
  score: number
}

const PASSAGE_TARGET_CHARS = 400
const PASSAGE_MAX_CHARS = 600
/** Prefixes shorter than this would match too much of the index (and FTS5 keeps prefix indexes of 2 and 3 only). */
const MIN_PREFIX_CHARS = 3
const MAX_PREFIXES = 16
/**
 * The share of the question's weight (each term's IDF among the passages found; a term found in none
 * weighs the most) the best passage must hold to answer: below it, "nothing in the library answers".
 */
const RELEVANT_SHARE = 0.5

/**
 * The words a question is looked up by in the full-text index: its content words as prefixes of at
 * least 3 letters (their stems, so "meetings" finds "meeting", but with the "e" the stemmer drops
 * where the word has it: "notes" is looked up as "note", never as "not"), only letters and digits;
 * the generic ones ("time", "decide") only when there is nothing else.
 */
export function questionPrefixes(question: string): string[] {
  const all = words(question).filter(isContentWord).map(w => {
    const s = stem(w)
    return (w.startsWith(`${s}e`) ? `${s}e` : s).replace(/[^\p{L}\p{N}]/gu, '')
  }).filter(t => t.length >= MIN_PREFIX_CHARS)
  const specific = all.filter(t => !generic(stem(t)))
  return [...new Set(specific.length ? specific : all)].slice(0, MAX_PREFIXES)
}

/** A note's passages: from its timed segments (names shown as speakers) when it has them, else from its text. */
export function passagesOf(note: { id: string; title: string; text: string }, segments: readonly TranscriptSegment[] | null): LibraryPassage[] {
  const base = { noteId: note.id, title: note.title }
  if (!segments?.length) {
    return splitPassages(note.text).map(p => ({ ...base, start: null, end: null, speaker: null, text: p.text }))
  }
  const out: LibraryPassage[] = []
  let run: TranscriptSegment[] = []
  let chars = 0
  const flush = () => {
    if (!run.length) return
    const text = run.map(s => s.text.trim()).filter(Boolean).join(' ')
    if (text) out.push({ ...base, start: run[0]!.start, end: run.at(-1)!.end, speaker: run[0]!.speaker ?? null, text })
    run = []
    chars = 0
  }
  for (const s of segments) {
    const length = s.text.trim().length
    if (run.length && (s.speaker !== run[0]!.speaker || chars + length > PASSAGE_MAX_CHARS)) flush()
    run.push(s)
    chars += length + 1
    if (chars >= PASSAGE_TARGET_CHARS) flush()
  }
  flush()
  return out
}

/** How much a question's term in the note's title adds to a passage that matched in its own words, against its weight in the words. */
const TITLE_WEIGHT = 0.25
/** How much a generic term ("long", "time", "decide") counts toward what a passage must cover. */
const GENERIC_WEIGHT = 0.25
/** Words that frame a question rather than say what it is about ("what happens to …"), weighed as generic ones. */
const FRAMING_TERMS = new Set(['happen', 'mention', 'tell', 'know', 'think', 'plan'].map(w => terms(w)[0]!))
const generic = (t: string) => GENERIC_TERMS.has(t) || FRAMING_TERMS.has(t)

/**
 * The `k` best passages for the question, best first, and whether the best one answers it at all: it
 * holds (in its words or its note's title) at least RELEVANT_SHARE of the question's weight. A title
 * only adds to a passage whose own words match: the moment cited is where it is said.
 */
export function rankPassages(passages: readonly LibraryPassage[], question: string, k: number): { ranked: RankedPassage[]; relevant: boolean } {
  const titleTerms = new Map<string, Set<string>>()
  const titleOf = (p: LibraryPassage) => {
    let title = titleTerms.get(p.noteId)
    if (!title) titleTerms.set(p.noteId, (title = new Set(terms(p.title))))
    return title
  }
  const sequences = passages.map(p => terms(p.text))
  const ranking = rankTermSequences(sequences)
  const wanted = queryOf(question).terms
  const found = ranking.search(question, passages.length).map(f => {
    const title = titleOf(passages[f.index]!)
    const bonus = wanted.filter(t => title.has(t)).reduce((sum, t) => sum + TITLE_WEIGHT * ranking.idf(t), 0)
    return { index: f.index, score: Math.round((f.score + bonus) * 1e6) / 1e6 }
  }).sort((a, b) => b.score - a.score || a.index - b.index).slice(0, k)
  if (!found.length) return { ranked: [], relevant: false }
  const best = passages[found[0]!.index]!
  const held = new Set([...sequences[found[0]!.index]!, ...titleOf(best)])
  const weight = (t: string) => ranking.idf(t) * (generic(t) ? GENERIC_WEIGHT : 1)
  const total = wanted.reduce((sum, t) => sum + weight(t), 0)
  const covered = wanted.filter(t => held.has(t)).reduce((sum, t) => sum + weight(t), 0)
  return {
    ranked: found.map(f => ({ ...passages[f.index]!, score: f.score })),
    relevant: total > 0 && covered / total >= RELEVANT_SHARE,
  }
}
