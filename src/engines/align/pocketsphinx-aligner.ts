/**
 * Forced alignment with PocketSphinx's C library: the segment's audio decoded against a grammar that
 * is exactly its text (grammar.ts), each word's times read from the best path. One decoder per
 * aligner, opened on first use (about 0.4 s) and kept: the dictionary gains `_unknown` once.
 *
 * Why the library and not `pocketsphinx_continuous -jsgf … -time yes`: the program loads the model
 * for every call (0.4 s, more than aligning a 10-s segment takes), needs the grammar and the audio in
 * files, and runs its voice-activity detector, which drops silent frames; here the model stays
 * loaded, the audio goes in from memory with every frame kept, and the grammar is a string
 * (docs/decisions.md, "Forced alignment", has the measurements).
 */
import { FRAME_RATE, PocketsphinxDecoder, PocketsphinxError, pocketsphinxLibraryMissing, type DecodedWord, type DecoderOptions } from '../pocketsphinx/decoder'
import { wordFits } from './fit'
import { alignmentGrammar, UNKNOWN_PHONES, UNKNOWN_WORD } from './grammar'
import { frameLevels, soundSpan, type Levels } from './sound-span'
import { spokenTokens, type SpokenToken, type SpokenUnit } from './spoken-words'
import type { EngineAlignment, WordAligner } from './word-aligner'

/** Frames a phone takes at the least (three HMM states, no skips): text needing more frames than the audio has cannot fit. */
const MIN_FRAMES_PER_PHONE = 3
/** Longer audio is left to the fallback: one grammar search over it would hold too much history. */
const MAX_ALIGN_SECONDS = 600

const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+|\(NULL\))$/
const baseWord = (w: string) => w.replace(/\(\d+\)$/, '')

interface UnitTime {
  start: number
  end: number
  confidence: number | null
}

export function createPocketsphinxAligner(opts: DecoderOptions = {}): WordAligner {
  let decoder: PocketsphinxDecoder | null = null
  /** whether the decoder has aligned anything yet */
  let used = false

  /**
   * The decoder, ready for a new segment: no noise estimate or normalization left from the one
   * before (a library whose normalization cannot be reset gets a new decoder).
   */
  function ready(): PocketsphinxDecoder {
    if (decoder && !decoder.startStream() && used) {
      decoder.free()
      decoder = null
    }
    if (decoder) return decoder
    used = false
    const d = PocketsphinxDecoder.open({ ...opts, lm: null })
    const added = UNKNOWN_PHONES.some(phone => {
      try {
        d.addWord(UNKNOWN_WORD, phone)
        return true
      } catch {
        return false // a model without this phone
      }
    })
    if (!added) {
      d.free()
      throw new PocketsphinxError(`the acoustic model has none of the phones ${UNKNOWN_PHONES.join(', ')} to stand for unknown words`)
    }
    decoder = d
    return d
  }

  return {
    name: 'pocketsphinx',
    unavailable: () => pocketsphinxLibraryMissing(opts),
    align(samples: Int16Array, text: string): EngineAlignment {
      const d = ready()
      const tokens = spokenTokens(text, w => d.pronunciation(w) !== null)
      const grammar = alignmentGrammar(tokens)
      if (!grammar) return { failed: 'the text has no spoken words' }
      const seconds = samples.length / 16_000
      if (seconds > MAX_ALIGN_SECONDS) return { failed: `the audio is longer than ${MAX_ALIGN_SECONDS} s` }
      const units = tokens.flatMap(t => t.units)
      const minFrames = units.reduce((n, u) => n + MIN_FRAMES_PER_PHONE * (u.kind === 'word' ? phoneCount(d, u.word) : 1), 0)
      if (minFrames > seconds * FRAME_RATE) return { failed: 'the text is too long to have been said in this audio' }

      used = true
      d.setGrammar('alignment', grammar)
      d.start()
      d.process(samples, true)
      d.end()
      const times = unitTimes(units, d.segments(), () => frameLevels(samples), seconds)
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
 * (fit.ts) as confidence; a run of unknown units takes the sound between the known words around
 * `_unknown` (sound-span.ts), shared among the run by characters, with no confidence. Null when the
 * path does not spell the units (a grammar the audio could not be matched to).
 */
function unitTimes(units: SpokenUnit[], path: DecodedWord[], levels: () => Levels, seconds: number): UnitTime[] | null {
  const heard = path.filter(w => !FILLER.test(w.word))
  if (heard.length !== alignmentLength(units)) return null
  const out: UnitTime[] = []
  const matched: { at: number; word: DecodedWord }[] = []
  let at = 0
  for (let i = 0; i < units.length; ) {
    const u = units[i]!
    const w = heard[at++]!
    if (u.kind === 'word') {
      if (baseWord(w.word) !== u.word) return null
      matched.push({ at: out.length, word: w })
      out.push({ start: w.start, end: w.end, confidence: null })
      i++
      continue
    }
    if (w.word !== UNKNOWN_WORD) return null
    const run: SpokenUnit[] = []
    while (units[i]?.kind === 'unknown') run.push(units[i++]!)
    const from = out.length > 0 ? out[out.length - 1]!.end : 0
    const to = heard[at]?.start ?? seconds
    const [start, end] = soundSpan(levels(), Math.min(from, w.start), Math.max(to, w.end))
    out.push(...shareByCharacters(run, start, end))
  }
  const fits = wordFits(matched.map(m => ({ acousticScore: m.word.acousticScore, frames: m.word.endFrame - m.word.startFrame + 1 })))
  matched.forEach((m, k) => (out[m.at]!.confidence = fits[k]!))
  return out
}

/** How many words the best path holds for these units: each known word, and one `_unknown` a run. */
function alignmentLength(units: SpokenUnit[]): number {
  return units.filter((u, i) => u.kind === 'word' || units[i - 1]?.kind !== 'unknown').length
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
