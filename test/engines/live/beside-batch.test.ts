import { afterAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { transcribeMedia } from '../../../src/engines/asr/chunked'
import { createPocketsphinxEngine } from '../../../src/engines/asr/pocketsphinx'
import { createAsrScheduler, type AsrScheduler } from '../../../src/engines/asr/scheduler'
import { openLiveRecognizer, type LiveEvent } from '../../../src/engines/live/index'
import { openLiveEngine } from '../../../src/engines/live/engines'
import type { SpeechContext } from '../../../src/engines/asr/adapter'
import { LIBRIVOX, speechWav } from '../../fixtures/speech'
import { tempDir } from '../../helpers/process'

/**
 * The live engine under the process's ASR slots beside the batch path the upload jobs use
 * (transcribeMedia, PocketSphinx, planned chunks), on real speech: the LibriVox clips of Debian's
 * pocketsphinx-testdata. Every grant is traced, so what is asserted is who had the slots and when, not
 * how long anything took.
 *
 * Needs: apt-get install libpocketsphinx3 pocketsphinx pocketsphinx-en-us pocketsphinx-testdata
 */

const SLOW = 240_000
const FRAME = 320
const dir = tempDir('notesvc-beside-batch-')
afterAll(() => dir.remove())
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' }

const speech = (() => {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(f => {
    const b = readFileSync(join(LIBRIVOX, f))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  })
  const out = new Int16Array(clips.reduce((n, c) => n + c.length + 16_000, 0))
  clips.reduce((at, c) => (out.set(c, at), at + c.length + 16_000), 0)
  return out
})()

type Mark = { kind: 'batch' | 'live'; what: 'ask' | 'grant' | 'release' }

/** The scheduler with every request, grant and release written down in order. */
function traced(inner: AsrScheduler): { scheduler: AsrScheduler; trace: Mark[] } {
  const trace: Mark[] = []
  const wrap = async (kind: Mark['kind'], asked: Promise<() => void>) => {
    trace.push({ kind, what: 'ask' })
    const release = await asked
    trace.push({ kind, what: 'grant' })
    return () => {
      trace.push({ kind, what: 'release' })
      release()
    }
  }
  const scheduler: AsrScheduler = {
    slots: inner.slots,
    stats: () => inner.stats(),
    acquire: (owner, signal) => wrap('batch', inner.acquire(owner, signal)),
    acquireLive: () => wrap('live', inner.acquireLive()),
  }
  return { scheduler, trace }
}

/** A recognizer fed the whole recording at once (as fast as it decodes: demand that never stops); its finals' texts. */
async function liveFinals(slots: AsrScheduler | undefined, fed: () => void = () => {}): Promise<string[]> {
  const r = openLiveRecognizer({ sampleRate: 16_000, slots })
  const finals: string[] = []
  const ready = new Promise<void>((resolve, reject) => r.on((e: LiveEvent) => {
    if (e.type === 'ready') resolve()
    if (e.type === 'error') reject(new Error(e.message))
    if (e.type === 'final') finals.push(e.text)
  }))
  await ready
  for (let at = 0; at < speech.length; at += FRAME) r.push(speech.subarray(at, at + FRAME))
  fed()
  await r.close()
  return finals
}

test('three live streams decoding as fast as they can and a 21-s batch transcription on 2 slots: the chunks run while the streams decode, the streams decode while the chunks run, and neither loses a word', async () => {
  const wav = join(dir.path, 'memo.wav')
  writeFileSync(wav, speechWav(21))
  const durationSeconds = (readFileSync(wav).length - 44) / 2 / 16_000
  const asr = createPocketsphinxEngine()
  const solo = await transcribeMedia(wav, { asr, tools, scheduler: createAsrScheduler(2) }, { language: null, durationSeconds })
  const alone = await liveFinals(undefined)

  const { scheduler, trace } = traced(createAsrScheduler(2))
  let fed = 0
  let startBatch = () => {}
  const allFed = new Promise<void>(resolve => (startBatch = resolve))
  const streams = Array.from({ length: 3 }, () => liveFinals(scheduler, () => ++fed === 3 && startBatch()))
  // the batch job comes in while the three streams have their whole recording waiting to be decoded
  await allFed
  const beside = await transcribeMedia(wav, { asr, tools, scheduler }, { language: null, durationSeconds })
  const liveBeside = await Promise.all(streams)

  // nothing lost or changed on either side by waiting for slots
  expect(beside.transcript).toBe(solo.transcript)
  expect(beside.transcript.split(' ').length).toBeGreaterThan(30)
  for (const finals of liveBeside) expect(finals).toEqual(alone)

  // who held the slots: the trace sees a grant a moment (a microtask) after it is made, a release at once
  let live = 0
  let batch = 0
  const liveGrantsDuringChunk: number[] = []
  for (const m of trace) {
    if (m.what === 'grant' && m.kind === 'live') {
      live++
      if (batch) liveGrantsDuringChunk[liveGrantsDuringChunk.length - 1]!++
    }
    if (m.what === 'grant' && m.kind === 'batch') {
      batch++
      liveGrantsDuringChunk.push(0)
    }
    if (m.what === 'release') m.kind === 'live' ? live-- : batch--
    // at most a decode per slot, a chunk per slot
    expect(live).toBeLessThanOrEqual(2)
    expect(batch).toBeLessThanOrEqual(2)
  }
  // both chunks ran (21 s on 2 slots: two of 10.5 s), and the streams decoded on while each ran
  expect(liveGrantsDuringChunk).toHaveLength(2)
  for (const n of liveGrantsDuringChunk) expect(n).toBeGreaterThan(0)
  // the first chunk got the first slot a decode gave back: no decode granted between its request and
  // its grant, but for (at most one per slot) those made before it asked and traced after
  const asked = trace.findIndex(m => m.kind === 'batch' && m.what === 'ask')
  const granted = trace.findIndex(m => m.kind === 'batch' && m.what === 'grant')
  expect(trace.slice(asked, granted).filter(m => m.kind === 'live' && m.what === 'grant').length).toBeLessThanOrEqual(2)
}, SLOW)

test('a stream whose decoder cannot load holds no slot: its audio and close go through, and a chunk then gets every slot', async () => {
  const slots = createAsrScheduler(1)
  const r = openLiveRecognizer({ sampleRate: 16_000, slots, decoder: { lm: join(dir.path, 'missing.lm.bin') } })
  const errors: string[] = []
  r.on(e => e.type === 'error' && errors.push(e.message))
  for (let at = 0; at < 16_000; at += FRAME) r.push(speech.subarray(at, at + FRAME))
  await r.close()
  expect(errors.join(' ')).toContain('language model not found')
  expect(slots.stats()).toEqual({ running: 0, waiting: 0 })
  const release = await slots.acquire({ job: 'memo', account: 'a' })
  expect(slots.stats()).toEqual({ running: 1, waiting: 0 })
  release()
})

test("the stream `serve` opens (openLiveEngine, PocketSphinx's live decoder) decodes under the slots it is given, a few hundred ms of audio a grant", async () => {
  const { scheduler, trace } = traced(createAsrScheduler(2))
  const engines = { setting: 'pocketsphinx' as const, asr: () => { throw new Error('not asked for PocketSphinx') }, speech: {} as SpeechContext, slots: scheduler }
  const r = openLiveEngine(engines, { turnDetection: null, language: null, prompt: null })
  const finals: string[] = []
  r.on(e => e.type === 'final' && finals.push(e.text))
  // 2 s of speech: at most 320 ms a grant, so 7 grants at least
  for (let at = 0; at < 32_000; at += FRAME) r.push(speech.subarray(at, at + FRAME))
  await r.close()
  expect(finals.join(' ').split(' ').length).toBeGreaterThan(2)
  expect(trace.filter(m => m.kind === 'live' && m.what === 'grant').length).toBeGreaterThanOrEqual(7)
  expect(scheduler.stats()).toEqual({ running: 0, waiting: 0 })
}, SLOW)
