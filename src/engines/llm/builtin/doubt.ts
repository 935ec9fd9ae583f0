/**
 * How well each sentence of a transcript was heard, from the confidence the speech engine gave each
 * word (PocketSphinx's word posterior, `TimedWord.confidence`), so the builtin summarizer states
 * facts (decisions, action items, owners, names, summary sentences, the title) only from sentences
 * heard clearly (docs/decisions.md, "Output that admits doubt"):
 *
 * - a word is heard with low confidence below LOW_CONFIDENCE (0.7);
 * - a sentence is trusted when fewer than half of its words were heard with low confidence;
 * - a transcript is mostly unreliable when more than half of its words were.
 *
 * Chosen from bench/doubt-thresholds.ts (PocketSphinx on the espeak-ng meetings, the LibriVox clips,
 * the card-game commands and a two-person recording, each heard word matched to the script): a word
 * below 0.7 was more often wrong than right (108 right, 273 wrong), one at 0.7 or above more often
 * right (114 right, 64 wrong); the sentence rule trusted 5 of the 6 sentences heard at least 80 %
 * right and 1 of the 33 heard less than half right, and the words of the sentences it trusted were
 * 71 % right against 31 % for the others.
 *
 * A sentence none of whose words carry a confidence (typed text, whisper.cpp, which gives none) is
 * trusted, so such input is summarized exactly as before.
 */
import type { TranscriptSegment } from '../../asr/engine'
import type { Unit } from './analysis'

export const LOW_CONFIDENCE = 0.7

/** A word of the text with the confidence the engine heard it with, located in the text (characters). */
export interface HeardSpan {
  start: number
  end: number
  confidence: number
  /** the word's place among the transcript's words that carry a confidence, from 0 */
  index: number
}

/** The hearing of one sentence: how many of its words carry a confidence, and how many of those are low. */
export interface SentenceHearing {
  words: number
  low: number
}

const TOKEN_RE = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*/gu
/** How many tokens of the text a word is looked for ahead of the last one found (speaker labels, a word the text lost). */
const NEAR = 12
/** Beyond that, a run of ANCHOR words is looked for this far (a stretch of text whose words carry no confidence). */
const FAR = 1000
const ANCHOR = 3

const tokensOf = (s: string) => [...s.matchAll(TOKEN_RE)].map(m => ({ text: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length }))

/**
 * Each word that carries a confidence, found in `text` in order: the text is made from the words
 * (sentences cut from word times, speaker labels between turns, or the segments' own text), so each
 * word is the next token or close after it; after a stretch of text without such words, the next
 * three words said together mark where they resume. A word not found is left out.
 */
export function heardSpans(text: string, segments: readonly TranscriptSegment[] | null | undefined): HeardSpan[] {
  const words = (segments ?? []).flatMap(s => s.words ?? []).filter(w => typeof w.confidence === 'number' && Number.isFinite(w.confidence))
  if (!words.length) return []
  const tokens = tokensOf(text)
  const parts = words.map(w => tokensOf(w.word).map(t => t.text))
  const matchesAt = (i: number, from: number) => parts[i]!.length > 0 && parts[i]!.every((p, k) => tokens[from + k]?.text === p)
  const spans: HeardSpan[] = []
  let at = 0
  const take = (index: number, i: number) => {
    const n = parts[index]!.length
    spans.push({ start: tokens[i]!.start, end: tokens[i + n - 1]!.end, confidence: words[index]!.confidence!, index })
    at = i + n
  }
  words.forEach((_, index) => {
    for (let i = at; i < Math.min(tokens.length, at + NEAR); i++) {
      if (matchesAt(index, i)) return take(index, i)
    }
    for (let i = at + NEAR; i < Math.min(tokens.length, at + FAR); i++) {
      let from = i
      let k = 0
      for (; k < ANCHOR && index + k < words.length && matchesAt(index + k, from); k++) from += parts[index + k]!.length
      if (k === ANCHOR) return take(index, i)
    }
  })
  return spans
}

/** Each unit's hearing (null for a unit none of whose words carry a confidence), in the units' order. */
function unitHearing(units: readonly Unit[], spans: readonly HeardSpan[]): (SentenceHearing | null)[] {
  let k = 0
  return units.map(u => {
    while (k < spans.length && spans[k]!.start < u.s.start) k++
    let words = 0
    let low = 0
    for (; k < spans.length && spans[k]!.end <= u.s.end; k++) {
      words++
      if (spans[k]!.confidence < LOW_CONFIDENCE) low++
    }
    return words ? { words, low } : null
  })
}

export function trusted(h: SentenceHearing | null): boolean {
  return h === null || h.low * 2 < h.words
}

/** What the summarizer needs to know about a transcript's hearing; null when no word carries a confidence. */
export interface Doubt {
  /** per unit, in order: whether facts may be stated from it */
  trusted: boolean[]
  /** words with a confidence, and how many of them are low */
  words: number
  lowWords: number
  /** sentences, and how many were withheld */
  sentences: number
  withheld: number
}

export function doubtOf(text: string, segments: readonly TranscriptSegment[] | null | undefined, units: readonly Unit[]): Doubt | null {
  const spans = heardSpans(text, segments)
  if (!spans.length) return null
  const hearing = unitHearing(units, spans)
  const trust = hearing.map(trusted)
  return {
    trusted: trust,
    words: spans.length,
    lowWords: spans.filter(s => s.confidence < LOW_CONFIDENCE).length,
    sentences: units.length,
    withheld: trust.filter(t => !t).length,
  }
}

/** More than half of the words were heard with low confidence. */
export const mostlyUnreliable = (d: Doubt) => d.lowWords * 2 > d.words

/** "12 of 14 words were", "1 of 14 words was" */
const countOf = (part: number, whole: number, noun: string) =>
  `${part.toLocaleString('en-US')} of ${whole.toLocaleString('en-US')} ${whole === 1 ? noun : `${noun}s`} ${part === 1 ? 'was' : 'were'}`

/**
 * What the summary says about the transcript's hearing: a warning that leads it when the transcript
 * is mostly unreliable, a closing remark when only some sentences were left out, null when none were.
 */
export function doubtNotice(d: Doubt): { lead: boolean; text: string } | null {
  if (d.withheld === 0) return null
  const words = `${countOf(d.lowWords, d.words, 'word')} heard with low confidence`
  const next = 'Listen to the recording or correct the transcript, then summarize again.'
  if (d.withheld === d.sentences) {
    return { lead: true, text: `The transcript is unreliable: ${words}, and no sentence clearly, so this summary states no decision, action item or owner. ${next}` }
  }
  const clear = `${(d.sentences - d.withheld).toLocaleString('en-US')} of ${d.sentences.toLocaleString('en-US')} sentences`
  if (mostlyUnreliable(d)) {
    return { lead: true, text: `The transcript is unreliable: ${words}. This summary comes only from the ${clear} heard clearly; no decision, action item or owner is taken from the others. ${next}` }
  }
  return { lead: false, text: `(${countOf(d.withheld, d.sentences, 'sentence')} heard unclearly and left out of this summary: ${words}.)` }
}
