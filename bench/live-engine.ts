/**
 * The live engine (src/engines/live) at real-time pace: the LibriVox clips of pocketsphinx-testdata
 * (1 s of silence after each) fed in 20-ms frames, each frame when its time comes, to 1, 4 and 8
 * recognizers at once. For each word: the time from its end in the audio to its first appearance in
 * a partial (p50, p95); per stream, how long after the audio's end its last final came (a stream that
 * kept real time answers within the silence after its last word plus a few hundred ms); the word error
 * rate against what was said, live and batch. Then 200 recognizers opened and closed one after
 * another, resident memory printed every 50 (a leak would grow it).
 *
 *   bun bench/live-engine.ts [levels=1,4,8] [opens=200]
 */
import { openLiveRecognizer, type LiveEvent } from '../src/engines/live/index'
import { createPocketsphinxRecognizer } from '../src/engines/pocketsphinx/recognize'
import { wer } from '../test/helpers/wer'
import { librivoxRecording } from './lib/librivox-recording'

const levels = (process.argv[2] ?? '1,4,8').split(',').map(Number)
const opens = Number(process.argv[3] ?? 200)
const FRAME = 320

const { clips, recording, truth, seconds } = librivoxRecording()

const batch = createPocketsphinxRecognizer()
const batchText = batch.recognize(recording).map(u => u.text).join(' ')
batch.close()

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN
const sleep = (ms: number) => new Promise(r => setTimeout(r, Math.max(0, ms)))

interface StreamResult { latencies: number[]; lastFinalAfterEnd: number; text: string }

async function stream(): Promise<StreamResult> {
  const r = openLiveRecognizer({ sampleRate: 16_000 })
  const seen: Array<{ at: number; e: LiveEvent }> = []
  let t0 = 0
  const ready = new Promise<void>(resolve => r.on(e => (e.type === 'ready' ? resolve() : seen.push({ at: (performance.now() - t0) / 1000, e }))))
  await ready
  t0 = performance.now()
  for (let at = 0; at < recording.length; at += FRAME) {
    await sleep(t0 + (at / 16_000) * 1000 - performance.now())
    r.push(recording.subarray(at, at + FRAME))
  }
  // the stream's end as a client would end it: the last turn's silence, then close (its last final)
  await r.close()
  const finals = seen.filter(s => s.e.type === 'final')
  const latencies: number[] = []
  for (const f of finals) {
    const final = f.e as Extract<LiveEvent, { type: 'final' }>
    const partials = seen.filter(s => s.e.type === 'partial' && s.e.item === final.item)
    final.words.forEach((w, k) => {
      // a partial's words shift as the search revises them: the word counts as shown once a partial
      // has it within two places of where the final puts it (else it first showed in the final)
      const first = partials.find(p => (p.e as { text: string }).text.split(' ').slice(Math.max(0, k - 2), k + 3).includes(w.word)) ?? f
      latencies.push(first.at - w.end)
    })
  }
  return { latencies, lastFinalAfterEnd: (finals.at(-1)?.at ?? NaN) - seconds, text: finals.map(f => (f.e as { text: string }).text).filter(Boolean).join(' ') }
}

console.log(`${seconds.toFixed(1)} s of speech per stream, fed at real time in 20-ms frames; WER of the batch path against what was said: ${(wer(truth, batchText).wer * 100).toFixed(1)} %`)
console.log('streams | word → partial p50 | p95 | max | last final after the audio (worst stream) | live WER (worst) | live vs batch (worst)')
for (const n of levels) {
  const results = await Promise.all(Array.from({ length: n }, stream))
  const all = results.flatMap(r => r.latencies)
  const worst = Math.max(...results.map(r => r.lastFinalAfterEnd))
  const liveWer = Math.max(...results.map(r => wer(truth, r.text).wer))
  const vsBatch = Math.max(...results.map(r => wer(batchText, r.text).wer))
  console.log(`${n} | ${quantile(all, 0.5).toFixed(2)} s | ${quantile(all, 0.95).toFixed(2)} s | ${Math.max(...all).toFixed(2)} s | ${worst.toFixed(2)} s | ${(liveWer * 100).toFixed(1)} % | ${(vsBatch * 100).toFixed(1)} %`)
}

const rss = () => `${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`
console.log(`\n${opens} recognizers opened, fed 1 s of speech, closed, one after another; resident memory:`)
for (let i = 1; i <= opens; i++) {
  const r = openLiveRecognizer({ sampleRate: 16_000 })
  r.push(clips[1]!.subarray(0, 16_000))
  await r.close()
  if (i === 1 || i % 50 === 0) {
    Bun.gc(true)
    console.log(`after ${i}: ${rss()}`)
  }
}
