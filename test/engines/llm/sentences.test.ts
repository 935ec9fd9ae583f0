import { describe, expect, test } from 'bun:test'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { createPocketsphinxEngine, findPocketsphinx } from '../../../src/engines/asr/pocketsphinx'
import type { LlmEngine, SummaryInput } from '../../../src/engines/llm/engine'
import { hasSentencePunctuation, LONG_SENTENCE_WORDS, sentencesFromWords, timedSentences } from '../../../src/engines/llm/sentences'
import { summarizeLong } from '../../../src/engines/llm/summarize'
import { MEETING_FAST, MEETING_SCRIPT, MEETING_SPOKEN, transcriptOf } from '../../fixtures/spoken-meeting'
import { LIBRIVOX } from '../../fixtures/speech'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** Words said one after another, `gaps[i]` seconds of silence after word i (0.1 s when not given). */
function spoken(text: string, gaps: Record<number, number> = {}, speaker?: string): TranscriptSegment & { speaker?: string } {
  let t = 0
  const words = text.split(' ').map((word, i) => {
    const w = { word, start: t, end: t + 0.3 }
    t = w.end + (gaps[i] ?? 0.1)
    return w
  })
  return { start: 0, end: words.at(-1)!.end, text, words, ...(speaker ? { speaker } : {}) }
}

const texts = (segs: TranscriptSegment[]) => sentencesFromWords(segs).map(s => s.text)

describe('sentences from word times', () => {
  test('a pause of 0.6 s ends a sentence, 0.5 s does not; each sentence capitalized and ended', () => {
    expect(texts([spoken('we decided to ship on friday tom will write the notes', { 5: 0.6 })])).toEqual([
      'We decided to ship on Friday.',
      'Tom will write the notes.',
    ])
    expect(texts([spoken('we decided to ship on friday tom will write the notes', { 5: 0.5 })])).toEqual([
      'We decided to ship on Friday tom will write the notes.'.replace('tom', 'Tom'),
    ])
  })

  test('a change of speaker ends a sentence even without a pause', () => {
    expect(texts([spoken('can you send it', {}, 'A'), spoken('yes by monday', {}, 'B')])).toEqual(['Can you send it.', 'Yes by Monday.'])
    expect(texts([spoken('can you send it'), spoken('yes by monday')]).length).toBe(1)
  })

  test('a run over 25 words is cut at its widest pause, each part keeping at least 4 words', () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')
    const cut = sentencesFromWords([spoken(words, { 17: 0.45, 30: 0.4 })])
    expect(cut.map(s => s.text.split(' ').length)).toEqual([18, 22])
    for (const s of cut) expect(s.text.split(' ').length).toBeLessThanOrEqual(LONG_SENTENCE_WORDS)
    // the widest pause is near the end: the cut keeps 4 words on the short side, then the rest is cut again
    expect(sentencesFromWords([spoken(words, { 38: 0.5 })]).every(s => s.text.split(' ').length >= 4)).toBe(true)
  })

  test('"i", given names, weekdays and months are written with a capital; ordinary words are not', () => {
    expect(texts([spoken("i think maria and i'll ask will about the may budget in october")])).toEqual([
      "I think Maria and I'll ask will about the may budget in October.",
    ])
  })

  test('each sentence carries the time of its first and last word', () => {
    const [a, b] = sentencesFromWords([spoken('one two three four five', { 1: 0.7 })])
    expect(a).toEqual({ text: 'One two.', start: 0, end: 0.7 })
    expect(b!.start).toBeCloseTo(1.4, 5)
    expect(b!.end).toBeCloseTo(2.5, 5)
  })

  test('text with its own punctuation, or without word times, is left as it is', () => {
    expect(hasSentencePunctuation(MEETING_SCRIPT)).toBe(true)
    expect(hasSentencePunctuation(transcriptOf(MEETING_SPOKEN))).toBe(false)
    const punctuated = [{ ...MEETING_SPOKEN[0]!, text: 'Good morning. Thanks for joining.' }]
    expect(timedSentences('Good morning. Thanks for joining.', punctuated)).toBeNull()
    expect(timedSentences(transcriptOf(MEETING_SPOKEN), MEETING_SPOKEN.map(({ words: _, ...s }) => s))).toBeNull()
    expect(timedSentences(transcriptOf(MEETING_SPOKEN), null)).toBeNull()
  })

  test('PocketSphinx on a 54-s spoken meeting (recorded word times): 11 to 16 sentences of at most 25 words, not one run', () => {
    for (const segs of [MEETING_SPOKEN, MEETING_FAST]) {
      const s = timedSentences(transcriptOf(segs), segs)!
      expect(s.length).toBeGreaterThanOrEqual(segs === MEETING_FAST ? 8 : 11)
      expect(s.length).toBeLessThanOrEqual(16)
      for (const x of s) expect(x.text.split(' ').length).toBeLessThanOrEqual(LONG_SENTENCE_WORDS)
      expect(s.map(x => x.text)).toContain(segs === MEETING_FAST ? 'We decided to do a lot to Friday because tests are gone.' : 'We decided to build on it to a Friday because the tests are not alone.')
    }
  })
})

describe('summarizeLong hands the engine sentences', () => {
  function recording() {
    const seen: SummaryInput[] = []
    const engine: LlmEngine = {
      name: 'recording',
      maxInputChars: Number.POSITIVE_INFINITY,
      async summarize(input) {
        seen.push(input)
        return { title: 't', summary: 's', structuredContent: {} }
      },
      async answer() {
        return { answer: '' }
      },
    }
    return { engine, seen }
  }

  test('an unpunctuated transcript with word times: the text is its sentences; the transcript style keeps it as heard', async () => {
    const { engine, seen } = recording()
    const text = transcriptOf(MEETING_SPOKEN)
    await summarizeLong(engine, { text, styleId: 'meeting-notes', segments: MEETING_SPOKEN })
    expect(seen[0]!.text).toStartWith('Good lord in l which was set for joining. Real talk')
    expect(seen[0]!.sentences!.length).toBeGreaterThan(10)
    await summarizeLong(engine, { text, styleId: 'transcript', segments: MEETING_SPOKEN })
    expect(seen[1]!.text).toBe(text)
  })

  test('punctuated text reaches the engine unchanged', async () => {
    const { engine, seen } = recording()
    await summarizeLong(engine, { text: MEETING_SCRIPT, styleId: 'note', segments: MEETING_SPOKEN })
    expect(seen[0]).toEqual({ text: MEETING_SCRIPT, styleId: 'note', segments: MEETING_SPOKEN })
  })
})

const LIBRIVOX_FILES = existsSync(LIBRIVOX) ? readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort() : []

describe.skipIf(!LIBRIVOX_FILES.length || 'missing' in findPocketsphinx())('real PocketSphinx on real speech', () => {
  test('three LibriVox recordings with a second of silence between them: at least three sentences, each of at most 25 words', async () => {
    const parts = LIBRIVOX_FILES.slice(0, 3).map(f => {
      const b = readFileSync(join(LIBRIVOX, f))
      const data = b.indexOf('data', 12)
      const pcm = new Int16Array(b.buffer.slice(b.byteOffset + data + 8, b.byteOffset + b.length - ((b.length - data - 8) % 2)))
      return Float32Array.from(pcm, v => v / 32768)
    })
    const silence = new Float32Array(16_000)
    const all = new Float32Array(parts.reduce((n, p) => n + p.length + silence.length, 0))
    let at = 0
    for (const p of parts) {
      all.set(p, at)
      at += p.length + silence.length
    }
    const { segments } = await createPocketsphinxEngine().transcribeChunk(all, { language: 'en' })
    const text = transcriptOf(segments)
    expect(hasSentencePunctuation(text)).toBe(false)
    const s = timedSentences(text, segments)!
    expect(s.length).toBeGreaterThanOrEqual(3)
    for (const x of s) {
      expect(x.text).toMatch(/^[A-Z].*\.$/)
      expect(x.text.split(' ').length).toBeLessThanOrEqual(LONG_SENTENCE_WORDS)
    }
  }, 120_000)
})
