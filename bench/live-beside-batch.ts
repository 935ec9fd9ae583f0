/**
 * Issue 32's "Beside batch": a 21-s upload's transcription submitted while live streams run, against
 * the same transcription alone; target: Done within solo + one chunk. Engine level: the batch path is
 * the upload job's (transcribeMedia with PocketSphinx, its planned chunks, the recording's duration
 * known), on a scheduler of the process's default slots (`NOTESVC_ASR_SLOTS`' default: the cores);
 * the streams are the live engine (bench/lib/live-stream.ts: the LibriVox clips at real-time pace in
 * 20-ms frames), the batch job submitted 8 s after they start.
 *
 * Two ways, in turn each round: "ungated" (the live engine without the slots: its threads decode
 * whenever audio comes, as before issue 32's sharing) and "gated" (openLiveRecognizer({ slots })).
 * For each: the batch's time to Done and its chunks' times, and each stream's lag (from a word's end
 * in the audio to its first partial: p95 over the words said while the batch ran, and over the whole
 * stream; how long after the audio's end its last final came). The streams alone (no batch) once
 * first, as the reference. The machine's load average is printed with every run: it is shared.
 *
 *   bun bench/live-beside-batch.ts [rounds=3] [streams=4] [alone=yes]    # alone=no: skip the streams alone
 *
 * Needs: apt-get install libpocketsphinx3 pocketsphinx pocketsphinx-en-us pocketsphinx-testdata
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { transcribeMedia } from '../src/engines/asr/chunked'
import type { AsrEngine } from '../src/engines/asr/engine'
import { createPocketsphinxEngine } from '../src/engines/asr/pocketsphinx'
import { createAsrScheduler, defaultAsrSlots, type AsrScheduler } from '../src/engines/asr/scheduler'
import { speechWav } from '../test/fixtures/speech'
import { LIVE_RECORDING, readyStream, type StreamRun } from './lib/live-stream'

const rounds = Number(process.argv[2] ?? 3)
const streamCount = Number(process.argv[3] ?? 4)
const withAlone = (process.argv[4] ?? 'yes') !== 'no'
const SLOTS = defaultAsrSlots()
const SUBMIT_AFTER_MS = 8_000

const dir = mkdtempSync(join(tmpdir(), 'notesvc-beside-batch-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
const wav = join(dir, 'upload.wav')
writeFileSync(wav, speechWav(21))
const durationSeconds = (readFileSync(wav).length - 44) / 2 / 16_000
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }
const engine = createPocketsphinxEngine()

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN
const median = (xs: number[]) => quantile(xs, 0.5)
const s = (x: number) => `${x.toFixed(2)} s`
const load = () => loadavg()[0]!.toFixed(2)

interface BatchRun { seconds: number; chunks: number[]; start: number; end: number }

/** The upload job's transcription, timed from submission to Done; each chunk's time in the engine. */
async function batch(scheduler: AsrScheduler): Promise<BatchRun> {
  const chunks: number[] = []
  const asr: AsrEngine = {
    ...engine,
    async transcribeChunk(samples, opts) {
      const t = performance.now()
      try {
        return await engine.transcribeChunk(samples, opts)
      } finally {
        chunks.push((performance.now() - t) / 1000)
      }
    },
  }
  const start = performance.now()
  const heard = await transcribeMedia(wav, { asr, tools, scheduler }, { language: null, durationSeconds })
  if (heard.transcript.split(' ').length < 30) throw new Error(`the batch transcription heard too little: ${heard.transcript}`)
  const end = performance.now()
  return { seconds: (end - start) / 1000, chunks, start, end }
}

/** `streamCount` streams at real-time pace, gated or not, and the batch job 8 s in (or none). */
async function streamsWith(gated: boolean, withBatch: boolean): Promise<{ runs: StreamRun[]; batch?: BatchRun; window: [number, number] }> {
  const scheduler = createAsrScheduler(SLOTS)
  const ready = await Promise.all(Array.from({ length: streamCount }, () => readyStream(gated ? scheduler : undefined)))
  const t0 = performance.now() + 100
  const runs = Promise.all(ready.map(r => r.run(t0)))
  let b: BatchRun | undefined
  if (withBatch) {
    await Bun.sleep(t0 + SUBMIT_AFTER_MS - performance.now())
    b = await batch(scheduler)
  }
  const window: [number, number] = b ? [(b.start - t0) / 1000, (b.end - t0) / 1000] : [0, Infinity]
  return { runs: await runs, batch: b, window }
}

function lagLine(runs: StreamRun[], window: [number, number]): string {
  const during = runs.map(r => quantile(r.words.filter(w => w.end >= window[0] && w.end <= window[1]).map(w => w.latency), 0.95))
  const whole = runs.map(r => quantile(r.words.map(w => w.latency), 0.95))
  const all = runs.flatMap(r => r.words.map(w => w.latency))
  return `word → partial p95 per stream, words said while the batch ran: ${during.map(s).join(', ')}; whole stream: ${whole.map(s).join(', ')} ` +
    `(all words p50 ${s(quantile(all, 0.5))}, max ${s(Math.max(...all))}); last final after the audio's end (worst stream): ${s(Math.max(...runs.map(r => r.lastFinalAfterEnd)))}`
}

console.log(`${SLOTS} slots, ${streamCount} streams of ${(LIVE_RECORDING.length / 16_000).toFixed(1)} s at real time, a ${durationSeconds.toFixed(1)}-s upload submitted ${SUBMIT_AFTER_MS / 1000} s in; load average at the start ${load()}`)
for (const gated of withAlone ? [false, true] : []) {
  const alone = await streamsWith(gated, false)
  console.log(`streams alone, ${gated ? 'gated' : 'ungated'} (load ${load()}): ${lagLine(alone.runs, alone.window)}`)
}

const solo: BatchRun[] = []
const beside: Record<'ungated' | 'gated', BatchRun[]> = { ungated: [], gated: [] }
for (let round = 1; round <= rounds; round++) {
  const b = await batch(createAsrScheduler(SLOTS))
  solo.push(b)
  console.log(`\nround ${round}: solo (load ${load()}): Done ${s(b.seconds)}, chunks ${b.chunks.map(s).join(', ')}`)
  for (const way of ['ungated', 'gated'] as const) {
    const r = await streamsWith(way === 'gated', true)
    beside[way].push(r.batch!)
    console.log(`  beside ${streamCount} streams, ${way} (load ${load()}): Done ${s(r.batch!.seconds)} (${(r.batch!.seconds / b.seconds).toFixed(2)} x solo), chunks ${r.batch!.chunks.map(s).join(', ')}`)
    console.log(`    ${lagLine(r.runs, r.window)}`)
  }
}

const soloDone = median(solo.map(b => b.seconds))
const oneChunk = median(solo.flatMap(b => b.chunks))
console.log(`\nmedian of ${rounds}: solo Done ${s(soloDone)}, one chunk ${s(oneChunk)}; target solo + one chunk = ${s(soloDone + oneChunk)}`)
for (const way of ['ungated', 'gated'] as const) {
  const done = median(beside[way].map(b => b.seconds))
  console.log(`beside ${streamCount} streams, ${way}: Done ${s(done)} = solo + ${s(done - soloDone)} (${((done - soloDone) / oneChunk).toFixed(2)} chunks): target ${done <= soloDone + oneChunk ? 'met' : 'missed'}`)
}
