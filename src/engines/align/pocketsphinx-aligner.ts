/**
 * Forced alignment with PocketSphinx's C library: the segment's audio decoded against a grammar that
 * is exactly its text (grammar.ts), each word's times read from the best path. One decoder per
 * aligner, opened on first use (about 0.4 s) and kept: the dictionary gains the phone words once.
 *
 * Why the library and not `pocketsphinx_continuous -jsgf … -time yes`: the program loads the model
 * for every call (0.4 s, more than aligning a 10-s segment takes), needs the grammar and the audio in
 * files, and runs its voice-activity detector, which drops silent frames; here the model stays
 * loaded, the audio goes in from memory with every frame kept, and the grammar is a string
 * (docs/decisions.md, "Forced alignment", has the measurements).
 */
import { FRAME_RATE, PocketsphinxDecoder, pocketsphinxLibraryMissing, type DecodedWord, type DecoderOptions } from '../pocketsphinx/decoder'
import { wordFits } from './fit'
import { alignmentGrammar, isPhoneWord, MODEL_PHONES, phoneWord } from './grammar'
import { spokenTokens, type SpokenToken, type SpokenUnit } from './spoken-words'
import type { EngineAlignment, WordAligner } from './word-aligner'

/** Frames a phone takes at the least (three HMM states, no skips): text needing more frames than the audio has cannot fit. */
const MIN_FRAMES_PER_PHONE = 3
/** Longer audio is left to the fallback: one grammar search over it would hold too much history. */
export const MAX_ALIGN_SECONDS = 600

const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+|\(NULL\))$/
const baseWord = (w: string) => w.replace(/\(\d+\)$/, '')

interface UnitTime {
  start: number
  end: number
  confidence: number | null
}

export function createPocketsphinxAligner(opts: DecoderOptions = {}): WordAligner {
  let decoder: PocketsphinxDecoder | null = null
  let phones: string[] = []

  function open(): PocketsphinxDecoder {
    if (decoder) return decoder
    const d = PocketsphinxDecoder.open({ ...opts, lm: null })
    phones = MODEL_PHONES.filter(p => {
      try {
        d.addWord(phoneWord(p), p)
        return true
      } catch {
        return false // a model without this phone
      }
    })
    decoder = d
    return d
  }

  return {
    name: 'pocketsphinx',
    unavailable: () => pocketsphinxLibraryMissing(opts),
    align(samples: Int16Array, text: string): EngineAlignment {
      const d = open()
      const tokens = spokenTokens(text, w => d.pronunciation(w) !== null)
      const grammar = alignmentGrammar(tokens, phones)
      if (!grammar) return { failed: 'the text has no spoken words' }
      const seconds = samples.length / 16_000
      if (seconds > MAX_ALIGN_SECONDS) return { failed: `the audio is longer than ${MAX_ALIGN_SECONDS} s` }
      const units = tokens.flatMap(t => t.units)
      const minFrames = units.reduce((n, u) => n + MIN_FRAMES_PER_PHONE * (u.kind === 'word' ? phoneCount(d, u.word) : 1), 0)
      if (minFrames > seconds * FRAME_RATE) return { failed: 'the text is too long to have been said in this audio' }

      d.setGrammar('alignment', grammar)
      d.start()
      d.process(samples, true)
      d.end()
      const times = unitTimes(units, d.segments())
      if (!times) return { failed: 'the audio did not match the text' }
      return { words: tokenTimes(tokens, times) }
    },
    close() {
      decoder?.free()
      decoder = null
    },
  }
}

function phoneCount(d: PocketsphinxDecoder, word: string): number {
  return d.pronunciation(word)?.split(' ').length ?? 1
}

/**
 * Each unit's times from the best path: a known word is the next real word on it, with its fit
 * (fit.ts) as confidence; a run of unknown units is the run of phone words there (shared among the
 * run by characters; no confidence). Null when the path does not spell the units (a grammar the
 * audio could not be matched to).
 */
export function unitTimes(units: SpokenUnit[], path: DecodedWord[]): UnitTime[] | null {
  const heard = path.filter(w => !FILLER.test(w.word))
  const out: UnitTime[] = []
  const matched: { at: number; word: DecodedWord }[] = []
  let at = 0
  for (let i = 0; i < units.length; ) {
    const u = units[i]!
    if (u.kind === 'word') {
      const w = heard[at++]
      if (!w || baseWord(w.word) !== u.word) return null
      matched.push({ at: out.length, word: w })
      out.push({ start: w.start, end: w.end, confidence: null })
      i++
      continue
    }
    const run: SpokenUnit[] = []
    while (units[i]?.kind === 'unknown') run.push(units[i++]!)
    const phonesHeard: DecodedWord[] = []
    while (heard[at] && isPhoneWord(heard[at]!.word)) phonesHeard.push(heard[at++]!)
    if (phonesHeard.length === 0) return null
    out.push(...shareByCharacters(run, phonesHeard[0]!.start, phonesHeard[phonesHeard.length - 1]!.end))
  }
  if (at !== heard.length) return null
  const fits = wordFits(matched.map(m => ({ acousticScore: m.word.acousticScore, frames: m.word.endFrame - m.word.startFrame + 1 })))
  matched.forEach((m, k) => (out[m.at]!.confidence = fits[k]!))
  return out
}

function shareByCharacters(run: SpokenUnit[], start: number, end: number): UnitTime[] {
  const chars = run.map(u => (u.kind === 'unknown' ? Math.max(1, u.chars) : 1))
  const total = chars.reduce((a, b) => a + b, 0)
  let at = start
  return chars.map(c => {
    const s = at
    at += ((end - start) * c) / total
    return { start: s, end: at, confidence: null }
  })
}

/** Each token's times: from its first unit's start to its last unit's end; a token nobody says takes no time where it stands. */
function tokenTimes(tokens: SpokenToken[], times: UnitTime[]): { word: string; start: number; end: number; confidence: number | null }[] {
  let next = 0
  let lastEnd = times[0]?.start ?? 0
  return tokens.map(t => {
    const mine = times.slice(next, next + t.units.length)
    next += t.units.length
    if (mine.length === 0) return { word: t.text, start: lastEnd, end: lastEnd, confidence: null }
    lastEnd = mine[mine.length - 1]!.end
    const known = mine.map(m => m.confidence).filter((c): c is number => c !== null)
    return {
      word: t.text,
      start: mine[0]!.start,
      end: lastEnd,
      confidence: known.length === mine.length ? Math.min(...known) : null,
    }
  })
}
