/**
 * Word confidences from PocketSphinx: the library (src/engines/pocketsphinx/recognize.ts, one decoder
 * kept) against the program the ASR adapter runs today (`pocketsphinx_continuous -time yes`, one
 * process a recording), on the five LibriVox clips of pocketsphinx-testdata and the four-voice
 * espeak-ng meeting (test/fixtures/meeting-voices.ts). Printed per recording: whether the two give
 * the same words, the largest difference of a word's time and of its confidence, and the time each
 * took; then how the confidence tells right words from wrong ones (each heard word matched to the
 * reference by the word-level edit alignment).
 *
 *   bun run bench/word-confidence.ts
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPocketsphinxRecognizer, type HeardWord } from '../src/engines/pocketsphinx/recognize'
import { MEETING_VOICES, meetingWav } from '../test/fixtures/meeting-voices'
import { LIBRIVOX } from '../test/fixtures/speech'
import { words as normalWords } from '../test/helpers/wer'
import { heardRight } from './lib/heard'

interface Recording {
  name: string
  samples: Int16Array
  reference: string
}

function pcmOf(wav: Uint8Array): Int16Array {
  const b = Buffer.from(wav)
  const data = b.indexOf('data', 12)
  return new Int16Array(b.buffer.slice(b.byteOffset + data + 8, b.byteOffset + b.length - ((b.length - data - 8) % 2)))
}

function recordings(): Recording[] {
  const lines = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n').filter(l => l.trim())
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map((f, i) => ({
    name: f.replace(/^sense_and_sensibility_01_austen_64kb-/, 'librivox ').replace('.wav', ''),
    samples: pcmOf(readFileSync(join(LIBRIVOX, f))),
    reference: lines[i]!.replace(/<\/?s>|\([^)]*\)\s*$/g, ''),
  }))
  const meeting = { name: 'espeak meeting', samples: pcmOf(meetingWav().wav), reference: MEETING_VOICES.map(l => l.text).join(' ') }
  return [...clips, meeting]
}

/** The program's words: `word start end confidence`, fillers left out. */
function programWords(stdout: string): HeardWord[] {
  return stdout.split('\n').flatMap(line => {
    const m = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\d+\.\d+)$/.exec(line.trim())
    if (!m || /^(<.*>|\[.*\])$/.test(m[1]!)) return []
    return [{ word: m[1]!.replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]) + 0.01, confidence: Number(m[4]) }]
  })
}

const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-confidence-'))
const recognizer = createPocketsphinxRecognizer()
try {
  let t = performance.now()
  recognizer.recognize(new Int16Array(1600))
  console.log(`opening the decoder with the language model: ${((performance.now() - t) / 1000).toFixed(2)} s (once a process); load average ${(await Bun.file('/proc/loadavg').text()).split(' ')[0]} on ${navigator.hardwareConcurrency} cores\n`)
  console.log('recording              audio  same words  max Δtime  max Δconfidence   program wall (CPU)   library wall (CPU)')
  const scored: { confidence: number; right: boolean }[] = []
  for (const rec of recordings()) {
    const raw = join(dir, 'input.raw')
    writeFileSync(raw, new Uint8Array(rec.samples.buffer))
    t = performance.now()
    const run = Bun.spawnSync(['pocketsphinx_continuous', '-infile', raw, '-time', 'yes', '-logfn', '/dev/null'])
    const programSeconds = (performance.now() - t) / 1000
    const programCpu = Number(run.resourceUsage.cpuTime.total) / 1e6
    if (run.exitCode !== 0) throw new Error(`pocketsphinx_continuous failed: ${run.stderr.toString().slice(-300)}`)
    const fromProgram = programWords(run.stdout.toString())
    t = performance.now()
    const c = process.cpuUsage()
    const fromLibrary = recognizer.recognize(rec.samples).flatMap(u => u.words)
    const librarySeconds = (performance.now() - t) / 1000
    const used = process.cpuUsage(c)
    const libraryCpu = (used.user + used.system) / 1e6
    const same = fromProgram.length === fromLibrary.length && fromProgram.every((w, i) => w.word === fromLibrary[i]!.word)
    const dTime = same ? Math.max(0, ...fromLibrary.map((w, i) => Math.max(Math.abs(w.start - fromProgram[i]!.start), Math.abs(w.end - fromProgram[i]!.end)))) : NaN
    const dConf = same ? Math.max(0, ...fromLibrary.map((w, i) => Math.abs(w.confidence - fromProgram[i]!.confidence))) : NaN
    console.log(
      `${rec.name.padEnd(20)} ${(rec.samples.length / 16_000).toFixed(1).padStart(6)} s  ${(same ? 'yes' : 'NO').padStart(10)}  ${(dTime * 1000).toFixed(1).padStart(6)} ms  ${dConf.toExponential(1).padStart(15)}  ${programSeconds.toFixed(1).padStart(6)} s (${programCpu.toFixed(1).padStart(4)} s)  ${librarySeconds.toFixed(1).padStart(7)} s (${libraryCpu.toFixed(1).padStart(4)} s)`,
    )
    const right = heardRight(normalWords(rec.reference), fromLibrary.map(w => w.word))
    fromLibrary.forEach((w, i) => scored.push({ confidence: w.confidence, right: right[i]! }))
  }
  const rightOnes = scored.filter(s => s.right)
  const wrongOnes = scored.filter(s => !s.right)
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN
  console.log(`\nconfidence against the reference (${scored.length} heard words; times from the library include its 10-ms last frame, the program's are shifted to match)`)
  console.log(`  heard right: ${rightOnes.length}, median confidence ${median(rightOnes.map(s => s.confidence)).toFixed(2)}, below 0.5: ${rightOnes.filter(s => s.confidence < 0.5).length}`)
  console.log(`  heard wrong: ${wrongOnes.length}, median confidence ${median(wrongOnes.map(s => s.confidence)).toFixed(2)}, below 0.5: ${wrongOnes.filter(s => s.confidence < 0.5).length}`)
} finally {
  recognizer.close()
  rmSync(dir, { recursive: true, force: true })
}
