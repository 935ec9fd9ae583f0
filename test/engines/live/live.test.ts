import { afterAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { LiveInputError, openLiveRecognizer, type LiveEvent, type LiveRecognizer } from '../../../src/engines/live/index'
import { createPocketsphinxRecognizer } from '../../../src/engines/pocketsphinx/recognize'
import { LIBRIVOX } from '../../fixtures/speech'
import { wer } from '../../helpers/wer'

/**
 * The live engine on real speech (Debian's pocketsphinx-testdata LibriVox clips), fed in 20-ms frames
 * as a microphone would send them.
 *
 * Needs: apt-get install libpocketsphinx3 pocketsphinx-en-us pocketsphinx-testdata
 */

const SLOW = 120_000
const FRAME = 320 // 20 ms at 16 kHz
const opened: LiveRecognizer[] = []
afterAll(() => Promise.all(opened.map(r => r.close())))

function clip(file: string): Int16Array {
  const b = readFileSync(join(LIBRIVOX, file))
  return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
}
const CLIPS = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().map(clip)

/** The clips one after another, `gap` seconds of silence after each. */
function recording(clips: Int16Array[], gap: number): Int16Array {
  const pause = Math.round(gap * 16_000)
  const out = new Int16Array(clips.reduce((n, c) => n + c.length + pause, 0))
  let at = 0
  for (const c of clips) {
    out.set(c, at)
    at += c.length + pause
  }
  return out
}

function open(opts: Parameters<typeof openLiveRecognizer>[0] = { sampleRate: 16_000 }) {
  const r = openLiveRecognizer(opts)
  opened.push(r)
  const events: LiveEvent[] = []
  const waiters: Array<{ ok: (e: LiveEvent) => boolean; resolve: (e: LiveEvent) => void }> = []
  r.on(e => {
    events.push(e)
    for (const w of [...waiters]) if (w.ok(e)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(e))
  })
  const next = (ok: (e: LiveEvent) => boolean) => {
    const seen = events.find(ok)
    return seen ? Promise.resolve(seen) : new Promise<LiveEvent>(resolve => waiters.push({ ok, resolve }))
  }
  return { r, events, next }
}

function pushFrames(r: LiveRecognizer, samples: Int16Array): void {
  for (let at = 0; at < samples.length; at += FRAME) r.push(samples.subarray(at, at + FRAME))
}

const finals = (events: LiveEvent[]) => events.filter((e): e is Extract<LiveEvent, { type: 'final' }> => e.type === 'final')

test('words show while the speaker is still speaking: a partial comes from half a clip, with no silence and no commit', async () => {
  const { r, events, next } = open()
  const first = CLIPS[1]! // "he was not an ill disposed young man …"
  pushFrames(r, first.subarray(0, Math.floor(first.length / 2)))
  const partial = await next(e => e.type === 'partial' && e.text.split(' ').length >= 2)
  expect(partial).toMatchObject({ type: 'partial', item: 0 })
  expect(events.some(e => e.type === 'final')).toBe(false)
  await r.close()
}, SLOW)

test('the whole recording in 20-ms frames: partials before each final, a word error rate (against what was said) at most 2 points above the batch path', async () => {
  const samples = recording(CLIPS, 1)
  const batch = createPocketsphinxRecognizer()
  const batchText = batch.recognize(samples).map(u => u.text).join(' ')
  batch.close()

  const { r, events } = open()
  pushFrames(r, samples)
  await r.close()
  const done = finals(events).filter(f => f.text)
  const liveText = done.map(f => f.text).join(' ')
  // what was said: the testdata's own transcription, clip after clip
  const truth = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').split('\n').map(l => l.replace(/<\/?s>|\(.*\)/g, '').trim()).filter(Boolean).join(' ')
  const liveWer = wer(truth, liveText).wer
  const batchWer = wer(truth, batchText).wer
  console.log(`live: ${liveText}\nbatch: ${batchText}\nWER against what was said: live ${(liveWer * 100).toFixed(1)} %, batch ${(batchWer * 100).toFixed(1)} %; live against batch ${(wer(batchText, liveText).wer * 100).toFixed(1)} %`)
  // each clip is its own turn at least (1 s of silence between them ends one)
  expect(done.length).toBeGreaterThanOrEqual(CLIPS.length)
  for (const f of done) {
    const firstPartial = events.findIndex(e => e.type === 'partial' && e.item === f.item)
    expect(firstPartial).toBeGreaterThanOrEqual(0)
    expect(firstPartial).toBeLessThan(events.indexOf(f))
    for (const w of f.words) {
      expect(w.start).toBeGreaterThanOrEqual(f.start)
      expect(w.end).toBeLessThanOrEqual(f.end + 0.011)
      expect(w.confidence).toBeGreaterThanOrEqual(0)
      expect(w.confidence).toBeLessThanOrEqual(1)
    }
  }
  // times from the stream's start: the last final ends near the last clip's end, not near its own turn's length
  const lastClipEnd = (samples.length - 16_000) / 16_000
  expect(Math.abs(done.at(-1)!.words.at(-1)!.end - lastClipEnd)).toBeLessThan(1)
  // accuracy: the live path's word error rate at most 2 points above the batch path's
  expect(liveWer).toBeLessThanOrEqual(batchWer + 0.02)
}, SLOW)

test('commit() ends the utterance at once, mid-speech; the audio after it is a new utterance', async () => {
  const { r, events, next } = open()
  const said = CLIPS[1]!
  pushFrames(r, said.subarray(0, Math.floor(said.length * 0.6)))
  r.commit()
  const final = await next(e => e.type === 'final')
  expect(final).toMatchObject({ type: 'final', item: 0 })
  expect((final as { text: string }).text.split(' ').length).toBeGreaterThanOrEqual(3)
  expect(events.filter(e => e.type === 'speechStopped')).toEqual([]) // ended by the commit, not by silence
  pushFrames(r, said.subarray(Math.floor(said.length * 0.6)))
  r.commit()
  expect(await next(e => e.type === 'final' && e.item === 1)).toMatchObject({ item: 1 })
  await r.close()
}, SLOW)

test('without turn detection nothing ends an utterance but commit(); close() ends the last one', async () => {
  const { r, events, next } = open({ sampleRate: 16_000, turnDetection: null })
  pushFrames(r, recording(CLIPS.slice(0, 2), 1))
  await next(e => e.type === 'partial' && e.text.split(' ').length >= 8)
  expect(finals(events)).toEqual([])
  await r.close()
  expect(finals(events).map(f => f.item)).toEqual([0])
}, SLOW)

test('without turn detection and without commits, a turn still ends after 60 s of audio: nothing grows without bound', async () => {
  const { r, events, next } = open({ sampleRate: 16_000, turnDetection: null })
  // 62 s of the clips, no silence between them
  const long = recording([...CLIPS, ...CLIPS, ...CLIPS, ...CLIPS], 0).subarray(0, 62 * 16_000)
  expect(long.length).toBe(62 * 16_000)
  pushFrames(r, long)
  const first = await next(e => e.type === 'final')
  expect(first).toMatchObject({ item: 0, start: 0, end: 60 })
  await r.close()
  expect(finals(events).map(f => f.item)).toEqual([0, 1])
}, SLOW)

test('audio of the wrong format or size is refused with a message saying what to send', async () => {
  expect(() => openLiveRecognizer({ sampleRate: 24_000 })).toThrow(/16000 Hz mono, not 24000 Hz; resample/)
  expect(() => openLiveRecognizer({ sampleRate: 16_000, turnDetection: { threshold: 2 } })).toThrow(/threshold must be between 0 and 1/)
  expect(() => openLiveRecognizer({ sampleRate: 16_000, turnDetection: { silenceDurationMs: -5 } })).toThrow(/silenceDurationMs must be between/)
  const { r } = open()
  const bad: unknown[] = [new Uint8Array(640), new Float32Array(320), new Int16Array(0), new Int16Array(160_001), 'pcm']
  for (const b of bad) {
    expect(() => r.push(b as Int16Array)).toThrow(LiveInputError)
  }
  expect(() => r.push(new Uint8Array(640) as unknown as Int16Array)).toThrow(/Int16Array of 16-bit PCM samples at 16000 Hz mono, not Uint8Array/)
  expect(() => r.push(new Int16Array(160_001))).toThrow(/1 to 160000 samples \(up to 10 s\), not 160001; split/)
  await r.close()
  expect(() => r.push(new Int16Array(320))).toThrow(/closed; open a new one/)
  expect(() => r.commit()).toThrow(/closed/)
  await r.close() // twice is fine
}, SLOW)
