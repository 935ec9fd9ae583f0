/**
 * Live transcription through the real route: `notesvc serve` processes on loopback, GET /v1/realtime,
 * the LibriVox clips of pocketsphinx-testdata (29.7 s with 1 s of silence after each) decoded by ffmpeg
 * to 24 kHz pcm16 and sent as OpenAI's clients send it, in 100-ms appends at real-time pace.
 *
 * 1. Streams at once (1, 4, 8, 12; server as shipped: NOTESVC_LIVE_MAX_STREAMS=8, no job workers):
 *    per word, the time from its end in the audio (the batch alignment's time for the final's word) to
 *    its first appearance in a partial, p50/p95; whether every stream kept real time: every turn's
 *    final within LAG_LIMIT s of when the turn could end (speech_stopped's audio_end_ms, which
 *    includes the VAD's silence) and the last turn's lag no more than LAG_GROWTH s above the first's
 *    (lag never grows); the streams past the limit, refused before the upgrade (503 + Retry-After);
 *    the serve process's CPU per audio second per stream.
 * 2. Accuracy (a server with its job workers): one stream, then its note through the usual stages;
 *    WER of the live finals and of the note's batch transcript against the clips' reference text.
 * 3. Beside batch: a 21-s upload (the clips back to back) to Done, alone, then while 4 streams run.
 *
 *   bun bench/live.ts [levels=1,4,8,12] [levels-only]
 */
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPocketsphinxRecognizer } from '../src/engines/pocketsphinx/recognize'
import { plannedChunkSeconds } from '../src/engines/asr/chunked'
import { LIBRIVOX, speechWav } from '../test/fixtures/speech'
import { wavFromPcm } from '../test/fixtures/wav'
import { wer } from '../test/helpers/wer'
import { runStream, type StreamRun } from './lib/live-client'
import { measureStream, quantile, type TimedWord } from './lib/live-measures'
import { runBench, startNotesvc } from './notesvc-process'

const LAG_LIMIT = 1.0
const LAG_GROWTH = 0.5
const UPLOAD_SECONDS = 21
const levels = (process.argv[2] ?? '1,4,8,12').split(',').map(Number)
const levelsOnly = process.argv[3] === 'levels-only'
const SERVER_ENV = { NOTESVC_METERING: 'off', NOTESVC_LLM: 'builtin', NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT: '100', NOTESVC_RATE_LIMITS: 'read=1000000,write=1000000,processing=1000000' }

const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const cpuSeconds = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}
const s2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–')
const pct = (x: number) => `${(x * 100).toFixed(1)} %`

function recording() {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => {
    const b = readFileSync(join(LIBRIVOX, f))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  })
  const pcm = new Int16Array(clips.reduce((n, c) => n + c.length + 16_000, 0))
  clips.reduce((at, c) => (pcm.set(c, at), at + c.length + 16_000), 0)
  const truth = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n').map(l => l.replace(/<\/?s>|\(.*\)/g, '').trim()).filter(Boolean).join(' ')
  return { pcm, truth }
}

/** The 16 kHz WAV as 24 kHz pcm16 through ffmpeg, as a client decodes a file (the CLI's --realtime). */
async function at24k(wavPath: string): Promise<Uint8Array> {
  const proc = Bun.spawn(['ffmpeg', '-nostdin', '-v', 'error', '-i', wavPath, '-f', 's16le', '-ac', '1', '-ar', '24000', 'pipe:1'], { stdout: 'pipe' })
  const bytes = new Uint8Array(await new Response(proc.stdout).arrayBuffer())
  if ((await proc.exited) !== 0) throw new Error('ffmpeg could not resample the recording')
  return bytes
}

/** n streams started together; resolves with every run. */
async function streams(n: number, base: string, key: string, pcm: Uint8Array): Promise<StreamRun[]> {
  let ready = 0
  let go: () => void = () => {}
  const start = new Promise<void>(resolve => (go = resolve))
  const configured = () => {
    if (++ready === n) go()
  }
  return Promise.all(Array.from({ length: n }, () => runStream({ base, key, pcm, start, configured })))
}

async function uploadToDone(base: string, headers: Record<string, string>, wav: Uint8Array) {
  const started = performance.now()
  const up = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers, body: JSON.stringify({ fileName: 'upload-21s.wav', contentType: 'audio/wav', fileSize: wav.length }) })).json()) as any
  if ((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status !== 200) throw new Error('PUT failed')
  if ((await fetch(`${base}/v1/uploads/${up.noteId}/complete`, { method: 'POST', headers })).status !== 202) throw new Error('complete failed')
  let transcribing: [number, number] = [NaN, NaN]
  for (;;) {
    const status = (await (await fetch(`${base}/v1/notes/${up.noteId}/status`, { headers })).json()) as any
    const t = (performance.now() - started) / 1000
    if (status.processingStage === 'transcribing') transcribing = [Number.isNaN(transcribing[0]) ? t : transcribing[0], t]
    if (status.status !== 'Summarizing') {
      if (status.status !== 'Done') throw new Error(`the upload ended ${JSON.stringify(status)}`)
      return { seconds: t, transcribing: transcribing[1] - transcribing[0] }
    }
    await Bun.sleep(50)
  }
}

async function noteText(base: string, headers: Record<string, string>, id: string): Promise<string> {
  for (;;) {
    const note = (await (await fetch(`${base}/v1/notes/${id}`, { headers })).json()) as any
    if (note.status === 'Done') return note.originalTranscription
    if (note.status !== 'Summarizing') throw new Error(`the stream's note ended ${note.status}`)
    await Bun.sleep(200)
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-bench-live-'))
  const { pcm, truth } = recording()
  const seconds = pcm.length / 16_000
  writeFileSync(join(dir, 'clips.wav'), wavFromPcm(pcm, 16_000))
  const pcm24 = await at24k(join(dir, 'clips.wav'))
  const batch = createPocketsphinxRecognizer()
  const heard = batch.recognize(pcm)
  batch.close()
  const aligned: TimedWord[] = heard.flatMap(u => u.words.map(w => ({ word: w.word, end: w.end })))
  console.log(`${seconds.toFixed(1)} s of speech per stream (5 LibriVox clips, 1 s of silence after each), 24 kHz pcm16 in 100-ms appends at real-time pace; ${navigator.hardwareConcurrency} cores; load at start ${load()}`)
  console.log(`kept real time: every turn's final within ${LAG_LIMIT} s of the turn's end (speech_stopped) and the last turn's lag at most ${LAG_GROWTH} s above the first's\n`)

  const a = await startNotesvc({ ...SERVER_ENV, NOTESVC_WORKERS: '0' })
  console.log('| streams | served | refused (503, Retry-After) | word → partial p50 | p95 | max | turn lag max (worst stream) | lag growth (worst) | last final after the audio (worst) | kept real time | serve CPU s per audio s per stream | cores serve got | error events | live WER (worst) | load (1 min) |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  try {
    for (const n of levels) {
      const loadBefore = load().split(' ')[0]
      const cpu0 = cpuSeconds(a.pid)
      const wall0 = performance.now()
      const runs = await streams(n, a.base, a.key, pcm24)
      const cpu = cpuSeconds(a.pid) - cpu0
      const cores = cpu / ((performance.now() - wall0) / 1000)
      const served = runs.filter(r => !r.refused)
      const refused = runs.filter(r => r.refused)
      const m = served.map(r => measureStream(r.events, r.audioSeconds, aligned))
      const all = m.flatMap(x => x.latencies)
      const lagMax = Math.max(...m.map(x => Math.max(...x.lags)))
      const growth = Math.max(...m.map(x => x.lags.at(-1)! - x.lags[0]!))
      const kept = m.every(x => Math.max(...x.lags) <= LAG_LIMIT && x.lags.at(-1)! - x.lags[0]! <= LAG_GROWTH)
      const codes = served.flatMap(r => (r.refused ? [] : r.events.filter(x => x.e.type === 'error').map(x => x.e.error?.code)))
      const errors = codes.length ? [...new Set(codes)].map(c => `${codes.filter(x => x === c).length} ${c}`).join(', ') : '0'
      const refusals = refused.length ? `${refused.length} (${[...new Set(refused.map(r => r.refused && `${r.status}, Retry-After ${r.retryAfter}`))].join('; ')})` : '0'
      console.log(`| ${n} | ${served.length} | ${refusals} | ${s2(quantile(all, 0.5))} s | ${s2(quantile(all, 0.95))} s | ${s2(Math.max(...all))} s | ${s2(lagMax)} s | ${s2(growth)} s | ${s2(Math.max(...m.map(x => x.lastFinalAfterEnd)))} s | ${kept ? 'yes' : 'no'} | ${(cpu / seconds / served.length).toFixed(3)} | ${cores.toFixed(2)} | ${errors} | ${pct(Math.max(...m.map(x => wer(truth, x.text).wer)))} | ${loadBefore} |`)
    }
  } finally {
    await a.stop()
  }

  if (levelsOnly) return rmSync(dir, { recursive: true, force: true })
  const b = await startNotesvc(SERVER_ENV)
  try {
    const [one] = await streams(1, b.base, b.key, pcm24)
    if (!one || one.refused || !one.noteId) throw new Error('the accuracy stream was refused or made no note')
    const live = measureStream(one.events, one.audioSeconds, aligned).text
    const batchText = await noteText(b.base, b.headers, one.noteId)
    const liveWer = wer(truth, live).wer
    const batchWer = wer(truth, batchText).wer
    console.log(`\nAccuracy (load ${load()}): live WER ${pct(liveWer)}, batch (the note's transcript through the usual stages) ${pct(batchWer)} against the clips' reference; live vs batch ${pct(wer(batchText, live).wer)}; live within 2 points of batch: ${liveWer - batchWer <= 0.02 ? 'yes' : 'no'} (${((liveWer - batchWer) * 100).toFixed(1)} points)`)

    const wav = speechWav(UPLOAD_SECONDS)
    const upload = wavFromPcm(new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + 44 + UPLOAD_SECONDS * 16_000 * 2)), 16_000)
    const solo = await uploadToDone(b.base, b.headers, upload)
    const running = streams(4, b.base, b.key, pcm24)
    await Bun.sleep(3000)
    const loadBeside = load()
    const beside = await uploadToDone(b.base, b.headers, upload)
    await running
    const chunk = plannedChunkSeconds(UPLOAD_SECONDS, navigator.hardwareConcurrency)
    const rounds = Math.ceil(UPLOAD_SECONDS / chunk / navigator.hardwareConcurrency)
    const oneChunk = solo.transcribing / rounds
    console.log(`Beside batch (load ${loadBeside}): a ${UPLOAD_SECONDS}-s upload to Done: solo ${s2(solo.seconds)} s, beside 4 streams ${s2(beside.seconds)} s, one chunk ${s2(oneChunk)} s (a ${chunk.toFixed(1)}-s chunk: the solo run's transcribing stage, ${rounds} round of the slots): within solo + one chunk? ${beside.seconds <= solo.seconds + oneChunk ? 'yes' : 'no'}`)
  } finally {
    await b.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

runBench(import.meta, main)
