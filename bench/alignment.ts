/**
 * Forced alignment of corrected segments against word times known by construction
 * (test/fixtures/timed-speech.ts): espeak-ng sentences said one word at a time in five voices with
 * known gaps, and the LibriVox clips of pocketsphinx-testdata cut at their first and last sound,
 * joined with pauses into recordings of about a minute.
 *
 * Each recording is first transcribed as a user's upload is (the PocketSphinx engine,
 * `pocketsphinx_continuous`); each piece's segment (the transcript's segments over it) is then
 * corrected to its true words and aligned (src/engines/align) on its audio, taken from halfway into
 * the pauses around it. Printed: the median and p95 word-boundary error against the known times
 * (targets 60 ms and 200 ms), with proportional times over the transcript's segment beside as the
 * baseline; the alignment time as a fraction of the segment's duration (target 0.1×); the fit
 * (confidence) of true words against swapped-in wrong ones; the program (`-jsgf`) against the library
 * on the same segments; and the process's memory over BENCH_ALIGNS (default 1000) alignments.
 *
 *   bun run bench/alignment.ts
 *   BENCH_RECORDINGS=2 BENCH_ALIGNS=200 bun run bench/alignment.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAligner, createPocketsphinxAligner, proportionalWords } from '../src/engines/align'
import { alignmentGrammar } from '../src/engines/align/grammar'
import { spokenTokens } from '../src/engines/align/spoken-words'
import { createPocketsphinxEngine } from '../src/engines/asr/pocketsphinx'
import { PocketsphinxDecoder } from '../src/engines/pocketsphinx/decoder'
import { ESPEAK_VOICES, espeakSentence, librivoxPieces, RATE, recordingOf, type Piece, type TimedRecording } from '../test/fixtures/timed-speech'
import { editDistance, words as werWords } from '../test/helpers/wer'

const RECORDINGS = Number(process.env.BENCH_RECORDINGS ?? 4)
const ALIGNS = Number(process.env.BENCH_ALIGNS ?? 1000)

const SENTENCES = [
  'good morning everyone and thank you for coming today',
  'we decided to move the launch to friday',
  'i will order the new servers by next monday',
  'please send me the report before lunch tomorrow',
  'the budget for this quarter is ten thousand dollars',
  'after the meeting we all went home early',
  'she asked whether the tests were finished yet',
  'our customers want a faster way to search their notes',
  'the quick brown fox jumps over the lazy dog',
  'can you write the survey questions by wednesday',
  'he forgot his keys in the car again this morning',
  'let us look at the numbers from last week',
  'the train was late because of the snow',
  'we need two more people on the support team',
  'turn left at the bridge and walk along the river',
  'nobody expected the results to be so good',
]

interface Boundary {
  kind: 'espeak' | 'librivox'
  aligned: number
  proportional: number
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN
}
const ms = (s: number) => `${Math.round(s * 1000)} ms`.padStart(8)
const cpuSeconds = (u: { user: number; system: number }) => (u.user + u.system) / 1e6

function buildRecordings(): TimedRecording[] {
  const clips = librivoxPieces()
  return Array.from({ length: RECORDINGS }, (_, r) => {
    const espeak = [0, 1, 2, 3].map(k => {
      const i = (r * 4 + k) % SENTENCES.length
      return espeakSentence(SENTENCES[i]!, ESPEAK_VOICES[(r + k) % ESPEAK_VOICES.length]!, { seed: 100 * r + k })
    })
    const pieces = [espeak[0]!, espeak[1]!, clips[(2 * r) % clips.length]!, espeak[2]!, clips[(2 * r + 1) % clips.length]!, espeak[3]!]
    return recordingOf(pieces, { seed: r + 1 })
  })
}

/** The transcript's segments over a piece, as one span; the piece itself when nothing was heard there. */
function segmentOver(piece: Piece, segments: { start: number; end: number }[]): { start: number; end: number } {
  const over = segments.filter(s => s.end > piece.start && s.start < piece.end)
  if (over.length === 0) return { start: piece.start, end: piece.end }
  return { start: Math.min(...over.map(s => s.start)), end: Math.max(...over.map(s => s.end)) }
}

async function main() {
  console.log(`building ${RECORDINGS} recordings (espeak-ng voices: ${ESPEAK_VOICES.join(', ')}; LibriVox clips) …`)
  const recordings = buildRecordings()
  const engine = createPocketsphinxEngine()
  const aligner = createAligner()
  const warm = performance.now()
  aligner.align(recordings[0]!.samples.subarray(0, RATE), 'hello')
  const openSeconds = (performance.now() - warm) / 1000

  const boundaries: Boundary[] = []
  const speed: number[] = []
  const cpu: number[] = []
  const segmentsAligned: { samples: Int16Array; text: string }[] = []
  let refWords = 0
  let errors = 0
  let fallbacks = 0
  for (const rec of recordings) {
    const floats = Float32Array.from(rec.samples, v => v / 32768)
    const heard = (await engine.transcribeChunk(floats, { language: 'en' })).segments
    for (const [i, piece] of rec.pieces.entries()) {
      const seg = segmentOver(piece, heard)
      const said = heard.filter(s => s.end > piece.start && s.start < piece.end).map(s => s.text).join(' ')
      refWords += werWords(piece.text).length
      errors += editDistance(werWords(piece.text), werWords(said))
      const before = i === 0 ? 0 : (rec.pieces[i - 1]!.end + piece.start) / 2
      const after = i === rec.pieces.length - 1 ? rec.samples.length / RATE : (piece.end + rec.pieces[i + 1]!.start) / 2
      const from = Math.max(before, Math.min(seg.start, piece.start) - 0.3)
      const to = Math.min(after, Math.max(seg.end, piece.end) + 0.3)
      const samples = rec.samples.subarray(Math.round(from * RATE), Math.round(to * RATE))
      const t = performance.now()
      const c = process.cpuUsage()
      const result = aligner.align(samples, piece.text, { offset: from })
      speed.push((performance.now() - t) / 1000 / (to - from))
      cpu.push(cpuSeconds(process.cpuUsage(c)) / (to - from))
      if (result.aligned !== 'pocketsphinx') fallbacks++
      segmentsAligned.push({ samples, text: piece.text })
      const baseline = proportionalWords(piece.text, seg.start, seg.end)
      piece.words.forEach((w, k) => {
        if (w.startKnown) boundaries.push({ kind: piece.kind, aligned: Math.abs(result.words[k]!.start - w.start), proportional: Math.abs(baseline[k]!.start - w.start) })
        if (w.endKnown) boundaries.push({ kind: piece.kind, aligned: Math.abs(result.words[k]!.end - w.end), proportional: Math.abs(baseline[k]!.end - w.end) })
      })
    }
  }

  console.log(`\ntranscribed first by pocketsphinx_continuous: word error rate ${((100 * errors) / refWords).toFixed(1)} % over ${refWords} words`)
  console.log(`segments aligned: ${speed.length}, fell back to proportional: ${fallbacks}`)
  console.log('\nword-boundary error against the known times (target: median ≤ 60 ms, p95 ≤ 200 ms)')
  console.log('boundaries                                  n    aligned median      p95   proportional median      p95')
  const row = (label: string, b: Boundary[]) =>
    console.log(`${label.padEnd(40)}${String(b.length).padStart(5)}  ${ms(quantile(b.map(x => x.aligned), 0.5))} ${ms(quantile(b.map(x => x.aligned), 0.95))}        ${ms(quantile(b.map(x => x.proportional), 0.5))} ${ms(quantile(b.map(x => x.proportional), 0.95))}`)
  row('espeak-ng words (starts and ends)', boundaries.filter(b => b.kind === 'espeak'))
  row('LibriVox clips (first start, last end)', boundaries.filter(b => b.kind === 'librivox'))
  row('all', boundaries)
  const load = (await Bun.file('/proc/loadavg').text()).split(' ')[0]
  console.log(`\nalignment time / segment duration (target ≤ 0.1×), load average ${load} on ${navigator.hardwareConcurrency} cores:`)
  console.log(`  wall: median ${quantile(speed, 0.5).toFixed(3)}×, p95 ${quantile(speed, 0.95).toFixed(3)}×, max ${Math.max(...speed).toFixed(3)}×   CPU: median ${quantile(cpu, 0.5).toFixed(3)}×, p95 ${quantile(cpu, 0.95).toFixed(3)}×, max ${Math.max(...cpu).toFixed(3)}×`)
  console.log(`  opening the decoder, once: ${openSeconds.toFixed(2)} s`)

  fitOfWrongWords(aligner, segmentsAligned)
  programAgainstLibrary(segmentsAligned.slice(0, 6))
  memoryOverAligns(aligner, segmentsAligned[0]!)
  aligner.close()
}

/** Every third word swapped for a word of another sentence: how the fit (confidence) tells them apart. */
function fitOfWrongWords(aligner: ReturnType<typeof createAligner>, segments: { samples: Int16Array; text: string }[]) {
  const right: number[] = []
  const wrong: number[] = []
  let unmatched = 0
  segments.forEach((seg, i) => {
    const other = segments[(i + 3) % segments.length]!.text.split(' ')
    const mine = seg.text.split(' ')
    const swapped = mine.map((w, k) => (k % 3 === 1 && other[k] && other[k] !== w ? other[k]! : w))
    const r = aligner.align(seg.samples, swapped.join(' '))
    if (r.aligned !== 'pocketsphinx') {
      unmatched++
      return
    }
    r.words.forEach((w, k) => {
      if (w.confidence !== null) (swapped[k] === mine[k] ? right : wrong).push(w.confidence)
    })
    const all = aligner.align(seg.samples, seg.text)
    all.words.forEach(w => w.confidence !== null && right.push(w.confidence))
  })
  const share = (xs: number[], f: (x: number) => boolean) => `${((100 * xs.filter(f).length) / Math.max(1, xs.length)).toFixed(0)} %`
  console.log(`\nfit (confidence) with every third word swapped for another sentence's (${segments.length} segments; ${unmatched} no longer matched the audio and fell back)`)
  console.log(`  words that were said:   ${String(right.length).padStart(4)}  fit ≥ 0.5: ${share(right, x => x >= 0.5)}  median ${quantile(right, 0.5).toFixed(2)}`)
  console.log(`  words that were not:    ${String(wrong.length).padStart(4)}  fit < 0.5: ${share(wrong, x => x < 0.5)}  median ${quantile(wrong, 0.5).toFixed(2)}`)
}

/** The same grammars through `pocketsphinx_continuous -jsgf` (one process each) against the library. */
function programAgainstLibrary(segments: { samples: Int16Array; text: string }[]) {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-align-'))
  const own = createPocketsphinxAligner()
  try {
    const decoder = PocketsphinxDecoder.open()
    const tokens = segments.map(s => spokenTokens(s.text, w => decoder.pronunciation(w) !== null))
    decoder.free()
    let program = 0
    let programCpu = 0
    let library = 0
    let libraryCpu = 0
    let audio = 0
    own.align(segments[0]!.samples, segments[0]!.text)
    segments.forEach((s, i) => {
      writeFileSync(join(dir, `${i}.gram`), alignmentGrammar(tokens[i]!)!)
      writeFileSync(join(dir, `${i}.raw`), new Uint8Array(s.samples.buffer, s.samples.byteOffset, s.samples.byteLength))
      let t = performance.now()
      const run = Bun.spawnSync(['pocketsphinx_continuous', '-infile', join(dir, `${i}.raw`), '-jsgf', join(dir, `${i}.gram`), '-time', 'yes', '-remove_silence', 'no', '-logfn', '/dev/null'])
      program += performance.now() - t
      programCpu += Number(run.resourceUsage.cpuTime.total) / 1e6
      if (run.exitCode !== 0) throw new Error(`pocketsphinx_continuous failed: ${run.stderr.toString().slice(-300)}`)
      t = performance.now()
      const c = process.cpuUsage()
      own.align(s.samples, s.text)
      library += performance.now() - t
      libraryCpu += cpuSeconds(process.cpuUsage(c))
      audio += s.samples.length / RATE
    })
    console.log(`\nthe program against the library on ${segments.length} segments (${audio.toFixed(1)} s of audio, the same grammars)`)
    console.log(`  pocketsphinx_continuous -jsgf, a process each: wall ${(program / 1000).toFixed(2)} s (${(program / 1000 / audio).toFixed(3)}×), CPU ${programCpu.toFixed(2)} s (${(programCpu / audio).toFixed(3)}×)`)
    console.log(`  the library, decoder kept:                   wall ${(library / 1000).toFixed(2)} s (${(library / 1000 / audio).toFixed(3)}×), CPU ${libraryCpu.toFixed(2)} s (${(libraryCpu / audio).toFixed(3)}×)`)
  } finally {
    own.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

function memoryOverAligns(aligner: ReturnType<typeof createAligner>, seg: { samples: Int16Array; text: string }) {
  const mb = () => (process.memoryUsage.rss() / 1e6).toFixed(0)
  const marks: string[] = [`0: ${mb()} MB`]
  for (let i = 1; i <= ALIGNS; i++) {
    aligner.align(seg.samples, seg.text)
    if (i % Math.max(1, Math.floor(ALIGNS / 4)) === 0) {
      Bun.gc(true)
      marks.push(`${i}: ${mb()} MB`)
    }
  }
  const cycles: string[] = []
  for (let i = 1; i <= 20; i++) {
    const own = createAligner()
    own.align(seg.samples, seg.text)
    own.close()
    if (i % 5 === 0) {
      Bun.gc(true)
      cycles.push(`${i}: ${mb()} MB`)
    }
  }
  console.log(`\nresident memory over ${ALIGNS} alignments of one ${(seg.samples.length / RATE).toFixed(1)}-s segment: ${marks.join(', ')}`)
  console.log(`resident memory over 20 decoders opened, used and freed: ${cycles.join(', ')}`)
}

await main()
