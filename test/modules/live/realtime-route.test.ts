/**
 * GET /v1/realtime through real HTTP on loopback (the app served by http/listen.ts, as `serve` does),
 * with Bun's own WebSocket client, driving the TEST-ONLY replay recognizer
 * (test/fixtures/replay-recognizer.ts: PocketSphinx's batch transcript of the LibriVox clips, replayed
 * as the audio reaches its times).
 */
import { afterAll, expect, test } from 'bun:test'
import { listen } from '../../../src/http/listen'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { replayLibrivoxRecognizers } from '../../fixtures/replay-recognizer'
import { speechWav } from '../../fixtures/speech'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

const t = createTestApp({
  liveRecognizers: replayLibrivoxRecognizers(),
  env: { NOTESVC_LIVE_MAX_STREAMS: '3', NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT: '1' },
})
const server = listen(t.app, { port: 0, hostname: '127.0.0.1' })
const base = `127.0.0.1:${server.port}/v1/realtime?intent=transcription`
// its own server with a 1-second idle timeout, so that no other test's stream meets it
const quiet = createTestApp({ liveRecognizers: replayLibrivoxRecognizers(), env: { NOTESVC_LIVE_IDLE_SECONDS: '1' } })
const quietServer = listen(quiet.app, { port: 0, hostname: '127.0.0.1' })
afterAll(() => {
  server.stop(true)
  quietServer.stop(true)
})

/** 16 kHz PCM of the LibriVox clips: the WAV's samples after its 44-byte header */
const pcm = speechWav(12).subarray(44)

interface Stream { ws: WebSocket; events: any[]; closed: Promise<{ code: number }>; next(type: string, after?: number): Promise<any> }

async function connect(protocols: string[], headers?: Record<string, string>, at = base): Promise<Stream> {
  const ws = new WebSocket(`ws://${at}`, { protocols, headers } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  const closed = new Promise<{ code: number }>(resolve => ws.addEventListener('close', e => resolve({ code: e.code })))
  await new Promise((resolve, reject) => {
    ws.onopen = resolve
    ws.onerror = reject
  })
  const next = (type: string, after = 0) => until(`a ${type} event`, () => events.slice(after).find(e => e.type === type))
  return { ws, events, closed, next }
}

function appendSeconds(ws: WebSocket, from: number, to: number) {
  for (let s = from; s < to; s += 0.1) {
    const chunk = pcm.subarray(Math.round(s * 16000) * 2, Math.round(Math.min(to, s + 0.1) * 16000) * 2)
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(chunk).toString('base64') }))
  }
}

async function upgradeStatus(headers: Record<string, string>, query = '?intent=transcription') {
  const res = await fetch(`http://127.0.0.1:${server.port}/v1/realtime${query}`, {
    headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
  })
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any }
}

test('a stream with the key as a subprotocol: session events, deltas word by word, speech stopped, committed and the completed turns of the clip', async () => {
  const key = await t.key({ email: 'speaker@example.com' })
  const s = await connect(['realtime', `openai-insecure-api-key.${key}`])
  expect(s.ws.protocol).toBe('realtime')
  await s.next('session.created')
  s.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }))
  expect((await s.next('session.updated')).session.audio.input.format).toEqual({ type: 'audio/pcm', rate: 16000 })
  appendSeconds(s.ws, 0, 10.5)
  await until('two completed turns', () => s.events.filter(e => e.type.endsWith('transcription.completed')).length === 2)
  s.ws.close()
  await s.closed

  const completed = s.events.filter(e => e.type === 'conversation.item.input_audio_transcription.completed')
  expect(completed.map(e => e.transcript)).toEqual([
    'and mr john guess what and then at leisure to consider how much there might be greatly in his power to do how about',
    'he was not until this blows young man',
  ])
  const first = completed[0].item_id
  const deltas = s.events.filter(e => e.type === 'conversation.item.input_audio_transcription.delta' && e.item_id === first)
  expect(deltas.slice(0, 3).map(e => e.delta)).toEqual(['and', ' mr', ' john'])
  expect(deltas.map(e => e.delta).join('')).toBe(completed[0].transcript)
  const turn = s.events.filter(e => e.item_id === first).map(e => e.type).filter(type => !type.endsWith('.delta') && !type.startsWith('notesvc.'))
  expect(turn).toEqual(['input_audio_buffer.speech_started', 'input_audio_buffer.speech_stopped', 'input_audio_buffer.committed', 'conversation.item.input_audio_transcription.completed'])
  expect(s.events.find(e => e.type === 'input_audio_buffer.speech_started')).toMatchObject({ audio_start_ms: 150, item_id: first })
  expect(s.events.find(e => e.type === 'input_audio_buffer.committed' && e.item_id === completed[1].item_id).previous_item_id).toBe(first)
})

test('the key in Authorization: Bearer works too; a bad event, a binary frame and an oversized frame each get the error event and the socket stays open', async () => {
  const key = await t.key({ email: 'bearer@example.com' })
  const s = await connect([], { authorization: `Bearer ${key}` })
  await s.next('session.created')
  s.ws.send(JSON.stringify({ type: 'response.create', event_id: 'bad_1' }))
  s.ws.send(new Uint8Array([1, 2, 3, 4]))
  s.ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(1536 * 1024) }))
  s.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit', event_id: 'empty_1' }))
  await until('four errors', () => s.events.filter(e => e.type === 'error').length === 4)
  expect(s.events.filter(e => e.type === 'error').map(e => [e.error.code, e.error.event_id])).toEqual([
    ['unknown_event', 'bad_1'], ['invalid_frame', null], ['frame_too_large', null], ['input_audio_buffer_commit_empty', 'empty_1'],
  ])
  // still open: audio and a commit of the client's own make a turn
  const before = s.events.length
  s.ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { rate: 16000 }, turn_detection: null } } } }))
  appendSeconds(s.ws, 0, 2.2)
  s.ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }))
  expect((await s.next('conversation.item.input_audio_transcription.completed', before)).transcript).toBe('and mr john guess what and then')
  s.ws.close()
  await s.closed
})

test('a viewer of a team workspace is refused before the upgrade (a stream makes a note and spends the pooled credits: an editor\'s); an editor is not', async () => {
  const team = await teamWorkspace(t, 'Live team')
  const viewer = await memberKey(t, team, (await person(t, 'live-viewer@example.com')).id, 'viewer')
  const refused = await upgradeStatus({ authorization: `Bearer ${viewer}` })
  expect([refused.status, refused.body.error.code]).toEqual([403, 'insufficient_scope'])
  expect(refused.body.error.message).toContain('Your role in this workspace is viewer; realtime needs editor or above.')
  const editor = await memberKey(t, team, (await person(t, 'live-editor@example.com')).id, 'editor')
  const s = await connect([], { authorization: `Bearer ${editor}` })
  await s.next('session.created')
  s.ws.close()
  await s.closed
})

test('refused before the upgrade, in the envelope: no key or a wrong one 401, a key without transcriptions:write 403, no intent 400', async () => {
  const none = await upgradeStatus({})
  expect([none.status, none.body.error.code]).toEqual([401, 'invalid_token'])
  const wrong = await upgradeStatus({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.svc_live_wrong' })
  expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_token'])
  const readOnly = await t.key({ email: 'reader@example.com', scopes: ['notes:read'] })
  const scoped = await upgradeStatus({ authorization: `Bearer ${readOnly}` })
  expect([scoped.status, scoped.body.error.code]).toEqual([403, 'insufficient_scope'])
  const key = await t.key({ email: 'reader@example.com' })
  const conversation = await upgradeStatus({ authorization: `Bearer ${key}` }, '?model=gpt-realtime')
  expect([conversation.status, conversation.body.error.code]).toEqual([400, 'invalid_request'])
})

test('the stream past the account limit is refused with 503 and Retry-After before the upgrade, and taken once the first ends', async () => {
  const key = await t.key({ email: 'busy@example.com' })
  const first = await connect(['realtime', `openai-insecure-api-key.${key}`])
  await first.next('session.created')
  const refused = await upgradeStatus({ authorization: `Bearer ${key}` })
  expect([refused.status, refused.body.error.code, refused.retryAfter]).toEqual([503, 'service_unavailable', '5'])
  expect(refused.body.error.message).toContain('1 live stream running')
  first.ws.close()
  await first.closed
  await until('the first stream released', () => t.app.realtime!.running() === 0)
  const again = await connect(['realtime', `openai-insecure-api-key.${key}`])
  await again.next('session.created')
  again.ws.close()
  await again.closed
})

test('a stream without events for NOTESVC_LIVE_IDLE_SECONDS gets the idle_timeout error and is closed', async () => {
  const key = await quiet.key({ email: 'quiet@example.com' })
  const s = await connect(['realtime', `openai-insecure-api-key.${key}`], undefined, `127.0.0.1:${quietServer.port}/v1/realtime?intent=transcription`)
  await s.next('session.created')
  const { code } = await s.closed
  expect(code).toBe(1000)
  expect(s.events.at(-1).error.code).toBe('idle_timeout')
})
