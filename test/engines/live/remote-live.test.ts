/**
 * The remote engine for live streams, per turn (src/engines/live/windowed.ts without a window), against
 * the stand-in the remote engine's own tests use (test/engines/asr/remote.test.ts): a SECOND real
 * notesvc, a `serve` process on PocketSphinx, reached through its OpenAI-compatible POST
 * /v1/audio/transcriptions with one of its keys. Real speech (the LibriVox clips, 1 s of silence after
 * each) in 20-ms frames; each turn found by the energy detector goes to it as one WAV when it ends.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../../src/config'
import { createAsrSelector } from '../../../src/engines/asr'
import { chooseLiveEngine, openLiveEngine, type LiveEngines } from '../../../src/engines/live/engines'
import type { LiveEvent } from '../../../src/engines/live/index'
import { DEFAULT_TURN_DETECTION } from '../../../src/engines/live/turns'
import { LIBRIVOX } from '../../fixtures/speech'
import { wavFromPcm } from '../../fixtures/wav'
import { firstStartKey, freePort, startServer, tempDir } from '../../helpers/process'
import { wer } from '../../helpers/wer'

const second = tempDir('notesvc-live-remote-')
let server: Awaited<ReturnType<typeof startServer>>
let base: string
let serverKey: string

beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = await startServer([process.execPath, 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, {
    env: {
      NOTESVC_DATA_DIR: second.path, PORT: String(port), NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off',
      NOTESVC_WORKERS: '0', NOTESVC_RATE_LIMITS: 'read=10000,write=1000,processing=1000',
    },
    timeoutMs: 30_000,
  })
  serverKey = await firstStartKey(server.proc.stdout)
}, 60_000)

afterAll(async () => {
  await server?.stop()
  second.remove()
})

/** The first three LibriVox clips, 1 s of silence after each. */
function recording(): Int16Array {
  const clips = readdirSync(LIBRIVOX).filter(f => f.endsWith('.wav')).sort().slice(0, 3).map(f => {
    const b = readFileSync(join(LIBRIVOX, f))
    return new Int16Array(b.buffer.slice(b.byteOffset + 44, b.byteOffset + b.length))
  })
  const out = new Int16Array(clips.reduce((n, c) => n + c.length + 16_000, 0))
  clips.reduce((at, c) => (out.set(c, at), at + c.length + 16_000), 0)
  return out
}

async function transcriptions(): Promise<number> {
  const usage = (await (await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${serverKey}` } })).json()) as { recent: { credits: number; noteId: string | null }[] }
  return usage.recent.filter(r => r.credits > 0 && r.noteId === null).length
}

test('each turn is sent to the server when it ends and its answer is the final; no partials; the words are what the server hears in the whole recording', async () => {
  const config = loadConfig({ NOTESVC_DATA_DIR: second.path, NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: `${base}/v1`, NOTESVC_ASR_KEY: serverKey })
  const selector = createAsrSelector(config)
  const engines: LiveEngines = { setting: config.live.engine, asr: () => selector.current(), speech: config }
  expect(chooseLiveEngine(engines).kind).toBe('remote')
  const before = await transcriptions()

  const r = openLiveEngine(engines, { turnDetection: DEFAULT_TURN_DETECTION, language: 'en', prompt: null })
  const events: LiveEvent[] = []
  r.on(e => void events.push(e))
  const audio = recording()
  for (let at = 0; at < audio.length; at += 320) r.push(audio.subarray(at, at + 320))
  await r.close()

  expect(events.filter(e => e.type === 'error')).toEqual([])
  expect(events.filter(e => e.type === 'partial')).toEqual([])
  const finals = events.filter((e): e is Extract<LiveEvent, { type: 'final' }> => e.type === 'final')
  expect(finals.length).toBeGreaterThanOrEqual(3)
  // one request per turn, and every turn's final came after its speech stopped
  expect((await transcriptions()) - before).toBe(finals.length)
  for (const f of finals) {
    const types = events.filter(e => 'item' in e && e.item === f.item).map(e => e.type)
    expect(types).toEqual(['speechStarted', 'speechStopped', 'final'])
    expect(f.end).toBeLessThanOrEqual(audio.length / 16_000 + 0.01)
  }
  for (let i = 1; i < finals.length; i++) expect(finals[i]!.start).toBeGreaterThanOrEqual(finals[i - 1]!.end)

  // what the server hears in the whole recording sent to it at once
  const form = new FormData()
  form.append('file', new Blob([wavFromPcm(audio, 16_000) as unknown as BlobPart], { type: 'audio/wav' }), 'all.wav')
  form.append('model', 'whisper-1')
  const whole = (await (await fetch(`${base}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${serverKey}` }, body: form })).json()) as { text: string }
  const live = finals.map(f => f.text).join(' ')
  const heard = wer(whole.text, live)
  console.log(`remote live: ${finals.length} turns, ${live.split(' ').length} words; WER against the server's transcription of the whole recording ${heard.wer.toFixed(3)}`)
  expect(heard.wer).toBeLessThan(0.25)
}, 300_000)
