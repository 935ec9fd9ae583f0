import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PocketsphinxDecoder, PocketsphinxError, PocketsphinxUnavailableError } from '../../../src/engines/pocketsphinx/decoder'
import { LIBRIVOX } from '../../fixtures/speech'

/**
 * The bun:ffi binding of Debian's libpocketsphinx3 on a real LibriVox clip ("he was not an ill
 * disposed young man", 3 s): a grammar decode, the partial hypothesis a live caller reads while audio
 * arrives, and every misuse answered by an exception, never a crash.
 *
 * Needs: apt-get install libpocketsphinx3 pocketsphinx-en-us pocketsphinx-testdata
 */

const CLIP = join(LIBRIVOX, 'sense_and_sensibility_01_austen_64kb-0880.wav')
const SAID = 'he was not an ill disposed young man'
const grammarOf = (words: string) => `#JSGF V1.0;\ngrammar test;\npublic <said> = ${words} ;\n`

function clip(): Int16Array {
  const b = readFileSync(CLIP)
  return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
}

const decoder = PocketsphinxDecoder.open()
afterAll(() => decoder.free())

describe('decoding', () => {
  test('a grammar of the words said gives them back in order, with times inside the clip', () => {
    const samples = clip()
    decoder.setGrammar('said', grammarOf(SAID))
    decoder.start()
    decoder.process(samples, true)
    decoder.end()
    expect(decoder.hypothesis()).toBe(SAID)
    const words = decoder.segments().filter(w => !w.word.startsWith('<'))
    expect(words.map(w => w.word.replace(/\(\d\)$/, ''))).toEqual(SAID.split(' '))
    for (const [i, w] of words.entries()) {
      expect(w.end).toBeGreaterThan(w.start)
      expect(w.end).toBeLessThanOrEqual(samples.length / 16_000 + 0.01)
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(words[i - 1]!.end)
      expect(w.posterior).toBeGreaterThan(0)
      expect(w.posterior).toBeLessThanOrEqual(1)
    }
  })

  test('audio given a piece at a time: the partial hypothesis grows as it arrives', () => {
    const samples = clip()
    decoder.useSearch('said')
    decoder.start()
    expect(decoder.partial()).toBeNull()
    const partials: string[] = []
    for (let at = 0; at < samples.length; at += 8000) {
      decoder.process(samples.subarray(at, at + 8000))
      partials.push(decoder.partial() ?? '')
    }
    decoder.end()
    // half a second in, the first word at most; by the end, every word; each partial a beginning of the sentence
    expect(partials[0]!.split(' ').length).toBeLessThanOrEqual(1)
    expect(partials.at(-1)).toBe(SAID)
    for (const p of partials) expect(SAID.startsWith(p)).toBe(true)
    expect(new Set(partials).size).toBeGreaterThan(3)
    expect(decoder.hypothesis()).toBe(SAID)
  })

  test('a new stream starts the normalization afresh on this library (no reopening needed)', () => {
    expect(decoder.startStream()).toBe(true)
  })

  test('words added to the dictionary can be used in the next grammar', () => {
    expect(decoder.pronunciation('disposed')).toBe('D IH S P OW Z D')
    expect(decoder.pronunciation('illdisposed')).toBeNull()
    decoder.addWord('illdisposed', 'IH L D IH S P OW Z D')
    expect(decoder.pronunciation('illdisposed')).toBe('IH L D IH S P OW Z D')
    decoder.setGrammar('joined', grammarOf('he was not an illdisposed young man'))
    decoder.start()
    decoder.process(clip(), true)
    decoder.end()
    expect(decoder.hypothesis()).toBe('he was not an illdisposed young man')
  })
})

describe('misuse is an exception naming what to do, never a crash', () => {
  test.each([
    ['a grammar that does not parse', () => decoder.setGrammar('bad', 'public <s> = ( he | ;'), /could not build the grammar/],
    ['a grammar with a word the dictionary lacks', () => decoder.setGrammar('bad', grammarOf('he xqzzyvw')), /could not build the grammar/],
    ['a search never made', () => decoder.useSearch('nothing'), /no search named 'nothing'/],
    ['a phone the model lacks', () => decoder.addWord('qq', 'QQ'), /could not add the word 'qq'/],
    ['a word already in the dictionary', () => decoder.addWord('he', 'HH IY'), /could not add the word 'he'/],
    ['a setting that does not exist', () => decoder.setSearchSetting('-nonsense', 1), /no setting named '-nonsense'/],
    ['a NUL inside a word', () => decoder.pronunciation('he\0was'), /cannot contain a NUL/],
    ['process() before start()', () => decoder.process(new Int16Array(160)), /call start\(\) first/],
    ['end() before start()', () => decoder.end(), /call start\(\) first/],
  ])('%s', (_, call, message) => {
    expect(call).toThrow(PocketsphinxError)
    expect(call).toThrow(message)
  })

  test('start() twice, or changing the search during an utterance', () => {
    decoder.useSearch('said')
    decoder.start()
    expect(() => decoder.start()).toThrow(/end\(\) it first/)
    expect(() => decoder.useSearch('said')).toThrow(/end\(\) it first/)
    decoder.process(new Int16Array(0))
    decoder.end()
    // an utterance of nothing: no hypothesis, no words
    expect(decoder.hypothesis()).toBeNull()
    expect(decoder.segments()).toEqual([])
  })

  test('a freed decoder refuses every call; freeing twice is harmless', () => {
    const own = PocketsphinxDecoder.open()
    own.free()
    own.free()
    expect(() => own.start()).toThrow(/was freed; open a new one/)
    expect(() => own.pronunciation('he')).toThrow(/was freed/)
  })

  test('a missing model is named, with the package to install', () => {
    expect(() => PocketsphinxDecoder.open({ hmm: '/nonexistent/model' })).toThrow(PocketsphinxUnavailableError)
    expect(() => PocketsphinxDecoder.open({ hmm: '/nonexistent/model' })).toThrow(/acoustic model not found at \/nonexistent\/model; install it with `apt-get install libpocketsphinx3 pocketsphinx-en-us`/)
    expect(() => PocketsphinxDecoder.open({ lm: '/nonexistent.lm.bin' })).toThrow(/language model not found at \/nonexistent.lm.bin/)
  })

  test('a setting the library refuses', () => {
    expect(() => PocketsphinxDecoder.open({ settings: { '-nonsense': 'yes' } })).toThrow(/refused its settings/)
  })
})
