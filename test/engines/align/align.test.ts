import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AlignmentInputError, createAligner, createPocketsphinxAligner, type Alignment } from '../../../src/engines/align'
import { LIBRIVOX } from '../../fixtures/speech'
import { espeakSentence, RATE, recordingOf, type TimedRecording } from '../../fixtures/timed-speech'

/**
 * Forced alignment on speech whose word times are known by construction (espeak-ng words said one at
 * a time with known gaps: test/fixtures/timed-speech.ts), through Debian's libpocketsphinx3.
 *
 * Needs: apt-get install libpocketsphinx3 pocketsphinx-en-us pocketsphinx-testdata espeak-ng ffmpeg
 */

/**
 * How far a word's start or end may be from where it was said: clicking the word plays from its
 * start, and 150 ms early still lands in the pause before it, 150 ms late still in the word. The
 * median over a sentence must meet the target (60 ms); bench/alignment.ts measures about 20.
 */
const TOLERANCE = 0.15
const MEDIAN_TARGET = 0.06
const SLOW = 60_000

const aligner = createAligner()
afterAll(() => aligner.close())

const rounded = (x: number) => Math.round(x * 1000) / 1000

describe('words said with known gaps', () => {
  const TEXT = 'Please send me the report before lunch, tomorrow.'
  const GAPS = [0.05, 0.2, 0.03, 0.12, 0.3, 0.08, 0.15]
  let rec: TimedRecording
  beforeAll(() => {
    rec = recordingOf([espeakSentence(TEXT, 'en-us', { gaps: GAPS })], { lead: 0.6 })
  })

  test('each word starts and ends within 150 ms of where it was said (median within 60 ms), and says it was aligned', () => {
    const result = aligner.align(rec.samples, TEXT)
    expect(result.aligned).toBe('pocketsphinx')
    expect(result.reason).toBeUndefined()
    // the words are the text's own, punctuation and case kept
    expect(result.words.map(w => w.word)).toEqual(['Please', 'send', 'me', 'the', 'report', 'before', 'lunch,', 'tomorrow.'])
    const errors: number[] = []
    for (const [i, w] of result.words.entries()) {
      const truth = rec.words[i]!
      expect({ word: w.word, start: Math.abs(w.start - truth.start) <= TOLERANCE }).toEqual({ word: w.word, start: true })
      expect({ word: w.word, end: Math.abs(w.end - truth.end) <= TOLERANCE }).toEqual({ word: w.word, end: true })
      errors.push(Math.abs(w.start - truth.start), Math.abs(w.end - truth.end))
    }
    expect(errors.sort((a, b) => a - b)[errors.length / 2]!).toBeLessThanOrEqual(MEDIAN_TARGET)
    // words that were said fit the audio: a doubtful fit (under 0.5) is rare (6 % in the bench)
    expect(result.words.filter(w => w.confidence! < 0.5).length).toBeLessThanOrEqual(1)
  }, SLOW)

  test('proportional times would miss: the same tolerance fails for the baseline', () => {
    // the words are spread unevenly (gaps of 30 to 300 ms, words of 0.2 to 0.6 s): letters alone cannot place them
    const noEngine = createAligner([])
    const result = noEngine.align(rec.samples, TEXT)
    expect(result.aligned).toBe('proportional')
    const misses = result.words.filter((w, i) => Math.abs(w.start - rec.words[i]!.start) > TOLERANCE)
    expect(misses.length).toBeGreaterThan(2)
  })

  test('float samples give the same times as 16-bit ones, and an offset moves them all', () => {
    const fromInt = aligner.align(rec.samples, TEXT)
    const floats = Float32Array.from(rec.samples, v => v / 32768)
    const fromFloat = aligner.align(floats, TEXT, { offset: 12.5 })
    expect(fromFloat.words.map(w => [w.word, w.start, w.end])).toEqual(fromInt.words.map(w => [w.word, rounded(w.start + 12.5), rounded(w.end + 12.5)]))
  }, SLOW)
})

test('a segment aligned after another gets the same times and fits as the first time', () => {
  const clip = (id: string) => {
    const b = readFileSync(join(LIBRIVOX, `sense_and_sensibility_01_austen_64kb-${id}.wav`))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  }
  const first = aligner.align(clip('0880'), 'he was not an ill disposed young man')
  aligner.align(clip('0870'), 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them')
  expect(aligner.align(clip('0880'), 'he was not an ill disposed young man')).toEqual(first)
}, SLOW)

describe('words outside the dictionary', () => {
  // "Zorblax" and "Quenvik" are in no dictionary; espeak-ng says them by its own rules
  const TEXT = 'the Zorblax report reached Quenvik on friday'
  const GAPS = [0.1, 0.15, 0.1, 0.2, 0.1, 0.12]
  let rec: TimedRecording
  let result: Alignment
  beforeAll(() => {
    rec = recordingOf([espeakSentence(TEXT, 'en-gb-x-rp', { gaps: GAPS })], { lead: 0.5 })
    result = aligner.align(rec.samples, TEXT)
  })

  test('take the sound between their aligned neighbours, without a confidence', () => {
    expect(result.aligned).toBe('pocketsphinx')
    for (const i of [1, 4]) {
      const w = result.words[i]!
      expect(w.confidence).toBeNull()
      expect(Math.abs(w.start - rec.words[i]!.start)).toBeLessThanOrEqual(TOLERANCE)
      expect(Math.abs(w.end - rec.words[i]!.end)).toBeLessThanOrEqual(TOLERANCE)
    }
  }, SLOW)

  test('at the start or the end of the segment too', () => {
    const text = 'Zorblax said hello to Quenvik'
    const edges = recordingOf([espeakSentence(text, 'en-us+f1', { gaps: [0.1, 0.15, 0.1, 0.2] })], { lead: 0.4 })
    const r = aligner.align(edges.samples, text)
    expect(r.aligned).toBe('pocketsphinx')
    for (const i of [0, 4]) {
      expect(Math.abs(r.words[i]!.start - edges.words[i]!.start)).toBeLessThanOrEqual(TOLERANCE)
      expect(Math.abs(r.words[i]!.end - edges.words[i]!.end)).toBeLessThanOrEqual(TOLERANCE)
    }
  }, SLOW)

  test('leave the known words around them where they were said', () => {
    for (const i of [0, 2, 3, 5, 6]) {
      expect(Math.abs(result.words[i]!.start - rec.words[i]!.start)).toBeLessThanOrEqual(TOLERANCE)
      expect(result.words[i]!.confidence).not.toBeNull()
    }
  }, SLOW)
})

describe('text and audio that cannot be aligned', () => {
  const span = (r: Alignment, seconds: number, offset = 0) => {
    for (const [i, w] of r.words.entries()) {
      expect(w.start).toBeGreaterThanOrEqual(offset)
      // times are rounded to the millisecond
      expect(w.end).toBeLessThanOrEqual(offset + seconds + 0.0005)
      expect(w.end).toBeGreaterThanOrEqual(w.start)
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(r.words[i - 1]!.end)
    }
  }

  test('empty text gives no words, and says why', () => {
    const samples = new Int16Array(RATE)
    for (const text of ['', '   \n\t ']) {
      const r = aligner.align(samples, text)
      expect(r).toEqual({ words: [], aligned: 'proportional', reason: 'the text has no words' })
    }
  })

  test('audio with no speech (a faint hiss) falls back to proportional times, and says so', () => {
    const hiss = recordingOf([], { lead: 1.5, seed: 3 }).samples
    const r = aligner.align(hiss, 'hello there my friend', { offset: 4 })
    expect(r.aligned).toBe('proportional')
    expect(r.reason).toContain('did not match')
    expect(r.words.map(w => w.word)).toEqual(['hello', 'there', 'my', 'friend'])
    expect(r.words.every(w => w.confidence === null)).toBe(true)
    span(r, hiss.length / RATE, 4)
    expect(r.words[0]!.start).toBe(4)
    expect(r.words[3]!.end).toBe(rounded(4 + hiss.length / RATE))
  }, SLOW)

  test('text far longer than the audio falls back, and says so', () => {
    const rec = recordingOf([espeakSentence('good morning', 'en-us')], { lead: 0.2 })
    const text = 'good morning and welcome to the long meeting '.repeat(40).trim()
    const r = aligner.align(rec.samples, text)
    expect(r.aligned).toBe('proportional')
    expect(r.reason).toContain('too long')
    expect(r.words).toHaveLength(text.split(' ').length)
    span(r, rec.samples.length / RATE)
  }, SLOW)

  test('a NUL character in the text is refused with a clear error', () => {
    expect(() => aligner.align(new Int16Array(RATE), 'hello\0world')).toThrow(AlignmentInputError)
    expect(() => aligner.align(new Int16Array(RATE), 'hello\0world')).toThrow(/NUL character; remove it/)
  })

  test('garbage and grammar syntax in the text are words like any other: no error, one time per token', () => {
    const rec = recordingOf([espeakSentence('public grammar', 'en-us')], { lead: 0.3 })
    for (const text of ['%%% ;;; <<>> {} |', 'public <s> = ( a | b ) ; grammar', '#JSGF V1.0; //', '\u{1F600} \u200b \uFFFD', 'ééé ñ Ω']) {
      const r = aligner.align(rec.samples, text)
      expect(r.words.map(w => w.word)).toEqual(text.split(/\s+/).filter(t => t !== ''))
      span(r, rec.samples.length / RATE)
    }
  }, SLOW)

  test('an engine that fails to start: proportional times with its reason, not an exception', () => {
    const refused = createAligner([createPocketsphinxAligner({ settings: { '-nonsense': 'yes' } })])
    const r = refused.align(new Int16Array(RATE), 'one')
    expect(r).toEqual({
      words: [{ word: 'one', start: 0, end: 1, confidence: null }],
      aligned: 'proportional',
      reason: expect.stringContaining('pocketsphinx: PocketSphinx refused its settings'),
    })
  })

  test('no engine here (its model missing): proportional times, and the reason names what is missing', () => {
    const missing = createAligner([createPocketsphinxAligner({ hmm: '/nonexistent/en-us' })])
    const r = missing.align(new Int16Array(2 * RATE), 'two words')
    expect(r.aligned).toBe('proportional')
    expect(r.reason).toContain('acoustic model not found at /nonexistent/en-us')
    // by letters: 3 of 8 for "two", 5 of 8 for "words", over 2 s
    expect(r.words).toEqual([
      { word: 'two', start: 0, end: 0.75, confidence: null },
      { word: 'words', start: 0.75, end: 2, confidence: null },
    ])
  })
})
