import { afterAll, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPocketsphinxRecognizer } from '../../../src/engines/pocketsphinx/recognize'
import { tempDir } from '../../helpers/process'
import { LIBRIVOX } from '../../fixtures/speech'

/**
 * Recognition with word confidences through the library gives what `pocketsphinx_continuous -time
 * yes` prints, word for word: the same utterances, times within one 10-ms frame (the program prints
 * a word's last frame, the library's words end after it) and the same posterior, on two real LibriVox
 * clips with a pause between them.
 *
 * Needs: apt-get install pocketsphinx libpocketsphinx3 pocketsphinx-en-us pocketsphinx-testdata
 */

const SLOW = 120_000
const recognizer = createPocketsphinxRecognizer()
afterAll(() => recognizer.close())

function pcm(id: string): Int16Array {
  const b = readFileSync(join(LIBRIVOX, `sense_and_sensibility_01_austen_64kb-${id}.wav`))
  return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
}

/** `word start end confidence` lines of the program's output, fillers left out, utterance by utterance. */
function programWords(stdout: string): { word: string; start: number; end: number; confidence: number }[][] {
  const utterances: { word: string; start: number; end: number; confidence: number }[][] = []
  for (const line of stdout.split('\n')) {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\d+\.\d+)$/.exec(line.trim())
    if (!m) continue
    if (m[1] === '<s>') utterances.push([])
    if (/^(<.*>|\[.*\])$/.test(m[1]!)) continue
    utterances.at(-1)!.push({ word: m[1]!.replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]), confidence: Number(m[4]) })
  }
  return utterances.filter(u => u.length > 0)
}

test('the same words, times and confidences as pocketsphinx_continuous -time yes', () => {
  const a = pcm('0880')
  const b = pcm('0930')
  const samples = new Int16Array(a.length + 24_000 + b.length)
  samples.set(a, 0)
  samples.set(b, a.length + 24_000)
  const dir = tempDir('notesvc-recognize-')
  const raw = join(dir.path, 'two.raw')
  writeFileSync(raw, new Uint8Array(samples.buffer))
  const run = Bun.spawnSync(['pocketsphinx_continuous', '-infile', raw, '-time', 'yes', '-logfn', '/dev/null'])
  dir.remove()
  expect(run.exitCode).toBe(0)
  const expected = programWords(run.stdout.toString())

  const heard = recognizer.recognize(samples)
  expect(expected.length).toBeGreaterThanOrEqual(2)
  expect(heard.map(u => u.words.map(w => w.word))).toEqual(expected.map(u => u.map(w => w.word)))
  heard.forEach((u, i) => {
    expect(u.text).toBe(expected[i]!.map(w => w.word).join(' '))
    u.words.forEach((w, k) => {
      const p = expected[i]![k]!
      expect(Math.abs(w.start - p.start)).toBeLessThan(0.0015)
      expect(Math.abs(w.end - (p.end + 0.01))).toBeLessThan(0.0015)
      expect(Math.abs(w.confidence - p.confidence)).toBeLessThan(1e-5)
    })
  })
  // and the confidences say something: the words it got right are surer than those it got wrong
  const said = new Set('he was not an ill disposed young man he might even have been made amiable himself'.split(' '))
  const words = heard.flatMap(u => u.words)
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length
  expect(mean(words.filter(w => said.has(w.word)).map(w => w.confidence))).toBeGreaterThan(mean(words.filter(w => !said.has(w.word)).map(w => w.confidence)))
}, SLOW)

test('a recording heard after another is heard as it was the first time (times from its own start, normalization afresh)', () => {
  const a = pcm('0880')
  const first = recognizer.recognize(a)
  recognizer.recognize(pcm('0930'))
  const again = recognizer.recognize(a)
  expect(again).toEqual(first)
}, SLOW)
