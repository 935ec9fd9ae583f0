/**
 * One live stream at real-time pace for the benchmarks: the LibriVox clips of pocketsphinx-testdata
 * (1 s of silence after each) pushed in 20-ms frames, each when its time comes, to a recognizer; for
 * each word of its finals, when it first showed in a partial (bench/live.ts's measure: a word counts as
 * shown once a partial has it within two places of where the final puts it).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openLiveRecognizer, type LiveEvent } from '../../src/engines/live/index'
import type { AsrScheduler } from '../../src/engines/asr/scheduler'
import { LIBRIVOX } from '../../test/fixtures/speech'

const FRAME = 320

export const LIVE_RECORDING = (() => {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => {
    const b = readFileSync(join(LIBRIVOX, f))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  })
  const out = new Int16Array(clips.reduce((n, c) => n + c.length + 16_000, 0))
  clips.reduce((at, c) => (out.set(c, at), at + c.length + 16_000), 0)
  return out
})()

interface WordLatency {
  /** the word's end, seconds from the stream's first sample (= from its start at real-time pace) */
  end: number
  /** from its end in the audio to its first partial, seconds */
  latency: number
}

export interface StreamRun {
  words: WordLatency[]
  /** how long after the audio's end its last final came, seconds */
  lastFinalAfterEnd: number
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, Math.max(0, ms)))

/** Opens a recognizer and waits for its decoder; `run(t0)` then feeds it from `t0` (performance.now()) on. */
export async function readyStream(slots?: AsrScheduler): Promise<{ run: (t0: number) => Promise<StreamRun> }> {
  const r = openLiveRecognizer({ sampleRate: 16_000, slots })
  const seen: Array<{ at: number; e: LiveEvent }> = []
  let t0 = 0
  await new Promise<void>(resolve => r.on(e => (e.type === 'ready' ? resolve() : seen.push({ at: (performance.now() - t0) / 1000, e }))))
  return {
    async run(start) {
      t0 = start
      for (let at = 0; at < LIVE_RECORDING.length; at += FRAME) {
        await sleep(t0 + (at / 16_000) * 1000 - performance.now())
        r.push(LIVE_RECORDING.subarray(at, at + FRAME))
      }
      await r.close()
      const finals = seen.filter(s => s.e.type === 'final')
      const words: WordLatency[] = []
      for (const f of finals) {
        const final = f.e as Extract<LiveEvent, { type: 'final' }>
        const partials = seen.filter(s => s.e.type === 'partial' && s.e.item === final.item)
        final.words.forEach((w, k) => {
          const first = partials.find(p => (p.e as { text: string }).text.split(' ').slice(Math.max(0, k - 2), k + 3).includes(w.word)) ?? f
          words.push({ end: w.end, latency: first.at - w.end })
        })
      }
      return { words, lastFinalAfterEnd: (finals.at(-1)?.at ?? NaN) - LIVE_RECORDING.length / 16_000 }
    },
  }
}
