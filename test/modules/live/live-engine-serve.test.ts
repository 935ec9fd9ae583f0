/**
 * `serve` gives /v1/realtime the live engine NOTESVC_ASR calls for (src/engines/live/engines.ts through
 * engineRecognizers): with NOTESVC_ASR=remote, a stream's turns go to the remote server and its answer
 * is the turn's `completed` transcript. The remote server is a loopback stand-in that answers every
 * transcription with one fixed verbose_json (as the remote engine's failure tests use), so the text
 * can only have come from it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { firstStartKey, freePort, startServer, tempDir, until } from '../../helpers/process'

const REMOTE_TEXT = 'The remote server heard this turn.'
const data = tempDir('notesvc-live-serve-')
let requests = 0
const remote = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: req => {
    if (!new URL(req.url).pathname.endsWith('/audio/transcriptions')) return Response.json({ data: [] })
    requests++
    return Response.json({ task: 'transcribe', language: 'english', duration: 1, text: REMOTE_TEXT, segments: [{ id: 0, start: 0, end: 1, text: REMOTE_TEXT }] })
  },
})
let server: Awaited<ReturnType<typeof startServer>>
let port: number
let key: string

beforeAll(async () => {
  port = await freePort()
  server = await startServer([process.execPath, 'run', 'src/cli.ts', 'serve'], `http://127.0.0.1:${port}/v1/health`, {
    env: {
      NOTESVC_DATA_DIR: data.path, PORT: String(port), NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: `http://127.0.0.1:${remote.port}/v1`,
      NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off', NOTESVC_WORKERS: '0', NOTESVC_LOG_LEVEL: 'info',
    },
    timeoutMs: 30_000,
  })
  key = await firstStartKey(server.proc.stdout)
}, 60_000)

afterAll(async () => {
  await server?.stop()
  remote.stop(true)
  data.remove()
})

/** 24 kHz pcm16 (OpenAI's default rate): `seconds` of 200-ms syllables of a tone with 100-ms dips, then 1 s of near silence. */
function turn(seconds: number): Uint8Array {
  const rate = 24_000
  const out = new Int16Array(Math.round((seconds + 1) * rate))
  for (let i = 0; i < out.length; i++) {
    const t = i / rate
    out[i] = t < seconds && t % 0.3 < 0.2 ? Math.round(12_000 * Math.sin(2 * Math.PI * 200 * t)) : i % 2 ? 16 : -16
  }
  return new Uint8Array(out.buffer)
}

test('NOTESVC_ASR=remote: the turn goes to the remote server when it ends, and its answer is the completed transcript (no partials before it)', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `openai-insecure-api-key.${key}`] } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  const audio = turn(3)
  for (let at = 0; at < audio.length; at += 4800) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(audio.subarray(at, at + 4800)).toString('base64') }))
  const completed = await until('the turn completed', () => events.find(e => e.type === 'conversation.item.input_audio_transcription.completed'), 60_000)
  ws.close()
  expect(completed.transcript).toBe(REMOTE_TEXT)
  expect(requests).toBe(1)
  const item = completed.item_id
  // nothing while the turn is spoken; at its end the route sends the final's text as the one delta, then completed
  expect(events.filter(e => e.item_id === item).map(e => e.type)).toEqual([
    'input_audio_buffer.speech_started', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed',
    'conversation.item.input_audio_transcription.delta', 'conversation.item.input_audio_transcription.completed',
  ])
  expect(events.find(e => e.type === 'conversation.item.input_audio_transcription.delta').delta).toBe(REMOTE_TEXT)
  expect(events.filter(e => e.type === 'error')).toEqual([])
}, 90_000)
