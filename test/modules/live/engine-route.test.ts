/**
 * /v1/realtime with the REAL live engine (PocketSphinx through its library, modules/live/engine-recognizer.ts),
 * as `serve` runs it: the LibriVox clips converted by ffmpeg to OpenAI's default 24 kHz pcm16, sent in
 * 100-ms appends; the route resamples them to the engine's 16 kHz.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { listen } from '../../../src/http/listen'
import { engineRecognizers } from '../../../src/modules/live/engine-recognizer'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'
import { LIBRIVOX_HEARD } from '../../fixtures/librivox-heard'

const dir = mkdtempSync(join(tmpdir(), 'engine-route-'))
const t = createTestApp({ liveRecognizers: engineRecognizers() })
const server = listen(t.app, { port: 0, hostname: '127.0.0.1' })
afterAll(() => {
  server.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

/** the clips as 24 kHz mono pcm16 (ffmpeg's resampler), the first `seconds` of them */
function pcm24k(seconds: number): Uint8Array {
  writeFileSync(join(dir, 'in.wav'), speechWav(seconds))
  const r = Bun.spawnSync(['ffmpeg', '-v', 'error', '-y', '-i', join(dir, 'in.wav'), '-t', String(seconds), '-ar', '24000', '-ac', '1', '-f', 's16le', join(dir, 'out.pcm')])
  if (r.exitCode !== 0) throw new Error(r.stderr.toString())
  return new Uint8Array(readFileSync(join(dir, 'out.pcm')))
}

const words = (s: string) => s.toLowerCase().split(/\s+/).filter(Boolean)

test('24 kHz speech from an OpenAI-shaped client: words in deltas before the turn ends, and completed turns that say what the batch engine heard', async () => {
  const key = await t.key({ email: 'engine-route@example.com' })
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `openai-insecure-api-key.${key}`] } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  const audio = pcm24k(12)
  for (let at = 0; at < audio.length; at += 4800) {
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(audio.subarray(at, at + 4800)).toString('base64') }))
  }
  // the clips end in speech: a commit closes the last turn
  ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }))
  const completed = () => events.filter(e => e.type === 'conversation.item.input_audio_transcription.completed')
  await until('two completed turns', () => completed().length >= 2 || undefined, 60_000)
  ws.close()

  const heard = LIBRIVOX_HEARD.filter(s => s.end <= 12).flatMap(s => words(s.text))
  const live = completed().flatMap(e => words(e.transcript))
  const shared = live.filter(w => heard.includes(w)).length
  // the engine's own errors are its own (about a third of words, like the batch path's); a wrong rate or byte order would share almost none
  expect(shared / heard.length).toBeGreaterThan(0.5)
  const firstTurn = completed()[0].item_id
  const before = events.slice(0, events.indexOf(completed()[0])).filter(e => e.item_id === firstTurn)
  // the engine revises its words as it hears more: every revision as notesvc's partial (whole text), the appended text as deltas
  expect(before.filter(e => e.type === 'notesvc.transcription.partial').length).toBeGreaterThan(2)
  expect(before.filter(e => e.type === 'conversation.item.input_audio_transcription.delta').length).toBeGreaterThanOrEqual(1)
  // each turn: speech started, stopped, committed, completed, in that order
  expect(events.filter(e => e.item_id === firstTurn && e.type.startsWith('input_audio_buffer')).map(e => e.type)).toEqual(['input_audio_buffer.speech_started', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed'])
  expect(events.filter(e => e.type === 'error')).toEqual([])
  expect(events.some(e => e.type === 'input_audio_buffer.speech_started')).toBe(true)
}, 90_000)
