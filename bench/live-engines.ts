/**
 * The engines for live streams side by side (src/engines/live/engines.ts; docs/realtime.md, "Engines
 * for live streams"): one stream each, the LibriVox clips of pocketsphinx-testdata (29.7 s, 1 s of
 * silence after each) fed in 20-ms frames at real-time pace, through openLiveEngine as the route opens it.
 * Per engine: turns, partials per turn, how many partials revise earlier text (the route sends no
 * delta for those), the mean time between a turn's partials, how long after a turn's end (its
 * speech_stopped in the audio) its final came (p50, max), the word error rate against what was said,
 * and CPU seconds per audio second of this process (the decoder's threads included; for the remote
 * engine, of the server process too).
 *
 *   bun bench/live-engines.ts [engines=pocketsphinx,whisper-tiny,remote]
 *
 * whisper-tiny is the tests' generated model (test/fixtures/ggml-model.ts, random weights, 32 wide):
 * its words are nonsense and its cost is not base.en's, so its figures show what the sliding window
 * itself costs and how often it answers, not whisper.cpp's speed with a real model (none can be
 * downloaded on the machine these were taken on; docs/decisions.md says what a real one would change).
 * remote is a second notesvc `serve` on PocketSphinx, as the tests use.
 */
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWhisperEngine } from '../src/engines/asr/whisper'
import { createAsrSelector } from '../src/engines/asr'
import { loadConfig } from '../src/config'
import { openLiveEngine, type LiveEngines } from '../src/engines/live/engines'
import type { LiveEvent } from '../src/engines/live/index'
import { DEFAULT_TURN_DETECTION } from '../src/engines/live/turns'
import { writeTinyWhisperModel } from '../test/fixtures/ggml-model'
import { wer } from '../test/helpers/wer'
import { runBench, startNotesvc } from './notesvc-process'
import { librivoxRecording } from './lib/librivox-recording'

const FRAME = 320
const { recording, truth, seconds } = librivoxRecording()

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN
const sleep = (ms: number) => new Promise(r => setTimeout(r, Math.max(0, ms)))
/** CPU seconds used by a process and its ended children so far, from /proc (utime, stime, cutime, cstime: clock ticks of 10 ms) */
const cpuOf = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100
}

interface Engine { engines: LiveEngines | undefined; serverPid?: number; stop(): Promise<void> }

async function whisperWith(model: Parameters<typeof writeTinyWhisperModel>[1]): Promise<Engine> {
  const path = join(tmpdir(), `notesvc-bench-live-${process.pid}-${model?.state ?? 32}.bin`)
  writeTinyWhisperModel(path, model)
  // one context on both cores, as NOTESVC_ASR_SLOTS=1 would give it
  const engine = createWhisperEngine({ modelPath: path, contexts: 1 })
  const config = loadConfig({ NOTESVC_DATA_DIR: tmpdir(), NOTESVC_WHISPER_MODEL: path })
  return { engines: { setting: 'auto', asr: () => engine, speech: config }, stop: async () => rmSync(path, { force: true }) }
}

const ENGINES: Record<string, () => Promise<Engine>> = {
  pocketsphinx: async () => ({ engines: undefined, stop: async () => {} }),
  'whisper-tiny': () => whisperWith({ multilingual: false }),
  remote: async () => {
    const server = await startNotesvc({ NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off', NOTESVC_WORKERS: '0', NOTESVC_RATE_LIMITS: 'read=10000,write=1000,processing=1000' })
    const config = loadConfig({ NOTESVC_DATA_DIR: server.dataDir, NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: `${server.base}/v1`, NOTESVC_ASR_KEY: server.key })
    const selector = createAsrSelector(config)
    return { engines: { setting: 'auto', asr: () => selector.current(), speech: config }, serverPid: server.pid, stop: server.stop }
  },
}

async function measure(name: string): Promise<string> {
  const engine = await ENGINES[name]!()
  try {
    const r = openLiveEngine(engine.engines, { turnDetection: DEFAULT_TURN_DETECTION, language: 'en', prompt: null })
    const seen: Array<{ at: number; e: LiveEvent }> = []
    let t0 = 0
    const ready = new Promise<void>(resolve => r.on(e => (e.type === 'ready' ? resolve() : seen.push({ at: (performance.now() - t0) / 1000, e }))))
    await ready
    const cpu0 = process.cpuUsage()
    const server0 = engine.serverPid ? cpuOf(engine.serverPid) : 0
    t0 = performance.now()
    for (let at = 0; at < recording.length; at += FRAME) {
      await sleep(t0 + (at / 16_000) * 1000 - performance.now())
      r.push(recording.subarray(at, at + FRAME))
    }
    await r.close()
    const cpu = process.cpuUsage(cpu0)
    const serverCpu = engine.serverPid ? cpuOf(engine.serverPid) - server0 : 0
    const finals = seen.filter(s => s.e.type === 'final') as Array<{ at: number; e: Extract<LiveEvent, { type: 'final' }> }>
    const stopped = new Map(seen.filter(s => s.e.type === 'speechStopped').map(s => [(s.e as { item: number }).item, (s.e as { audioEndMs: number }).audioEndMs / 1000]))
    const afterEnd = finals.map(f => f.at - (stopped.get(f.e.item) ?? f.e.end))
    if (process.env.BENCH_VERBOSE) for (const f of finals) console.log(`  turn ${f.e.item}: ${f.e.start}-${f.e.end} s, stopped ${stopped.get(f.e.item)} s, final at ${f.at.toFixed(2)} s: ${f.e.text.slice(0, 60)}`)
    let partials = 0
    let revisions = 0
    const gaps: number[] = []
    for (const f of finals) {
      const ps = seen.filter(s => s.e.type === 'partial' && s.e.item === f.e.item) as Array<{ at: number; e: { text: string } }>
      partials += ps.length
      ps.forEach((p, i) => {
        if (i > 0 && !p.e.text.startsWith(ps[i - 1]!.e.text)) revisions++
        if (i > 0) gaps.push(p.at - ps[i - 1]!.at)
      })
    }
    const text = finals.map(f => f.e.text).filter(Boolean).join(' ')
    const cpuPerSecond = ((cpu.user + cpu.system) / 1e6 + serverCpu) / seconds
    return [
      name, String(finals.length), (partials / Math.max(1, finals.length)).toFixed(1), partials ? `${Math.round((100 * revisions) / partials)} %` : '-',
      gaps.length ? `${(gaps.reduce((a, b) => a + b, 0) / gaps.length).toFixed(2)} s` : '-',
      `${quantile(afterEnd, 0.5).toFixed(2)} s / ${Math.max(...afterEnd).toFixed(2)} s`,
      `${(wer(truth, text).wer * 100).toFixed(1)} %`,
      `${cpuPerSecond.toFixed(2)}${engine.serverPid ? ` (server ${(serverCpu / seconds).toFixed(2)})` : ''}`,
    ].join(' | ')
  } finally {
    await engine.stop()
  }
}

runBench(import.meta, async () => {
  const names = (process.argv[2] ?? Object.keys(ENGINES).join(',')).split(',')
  console.log(`${seconds.toFixed(1)} s of speech, one stream, 20-ms frames at real-time pace`)
  console.log('engine | turns | partials a turn | partials revising earlier text | between partials | final after the turn\'s end p50 / max | WER | CPU s per audio s')
  for (const name of names) {
    if (!ENGINES[name]) throw new Error(`unknown engine ${name}; use ${Object.keys(ENGINES).join(', ')}`)
    console.log(await measure(name))
  }
})
