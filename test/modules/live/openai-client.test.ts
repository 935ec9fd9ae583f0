/**
 * The official `openai` package's realtime client against the protocol layer on a loopback TLS server
 * (the client only dials wss:). The route does not exist yet (issue 32, next step): this server is a
 * test-only stand-in that answers with the protocol layer's own parse and server events, to show the
 * client reads them and where it puts the key.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { OpenAIRealtimeWebSocket } from 'openai/realtime/websocket'
import { parseClientFrame, serverEvents } from '../../../src/modules/live/protocol'
import { DEFAULT_SESSION, type LiveSessionConfig } from '../../../src/modules/live/session-config'
import { createTestApp } from '../../helpers/app'
import { replayLibrivoxRecognizers } from '../../fixtures/replay-recognizer'
import { speechWav } from '../../fixtures/speech'

const dir = mkdtempSync(join(tmpdir(), 'rt-tls-'))
let server: ReturnType<typeof Bun.serve>
const seen: { url?: string; protocols?: string | null } = {}
let ids = 0
const events = serverEvents((prefix) => `${prefix}_${++ids}`)

beforeAll(() => {
  const made = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'])
  expect(made.exitCode).toBe(0)
  // the certificate is self-signed and made a moment ago; only this test file's process trusts it blindly
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
  server = Bun.serve<{ session: LiveSessionConfig }>({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: Bun.file(join(dir, 'cert.pem')), key: Bun.file(join(dir, 'key.pem')) },
    fetch(req, srv) {
      seen.url = new URL(req.url).pathname + new URL(req.url).search
      seen.protocols = req.headers.get('sec-websocket-protocol')
      if (srv.upgrade(req, { headers: { 'Sec-WebSocket-Protocol': 'realtime' }, data: { session: DEFAULT_SESSION } })) return
      return new Response('upgrade required', { status: 426 })
    },
    websocket: {
      open(ws) {
        ws.send(JSON.stringify(events.sessionCreated('sess_1', ws.data.session)))
      },
      message(ws, frame) {
        const parsed = parseClientFrame(frame, ws.data.session)
        if (!parsed.ok) return void ws.send(JSON.stringify(events.error(parsed.error)))
        const event = parsed.event
        if (event.type === 'session.update' || event.type === 'transcription_session.update') {
          ws.data.session = event.config
          ws.send(JSON.stringify(events.sessionUpdated('sess_1', event.config, event.type === 'session.update' ? 'ga' : 'beta')))
        } else if (event.type === 'input_audio_buffer.commit') {
          ws.send(JSON.stringify(events.committed('item_1', null)))
        }
      },
    },
  })
})

afterAll(() => {
  // bun runs the next test files in this same process: their TLS must verify again
  delete process.env.NODE_TLS_REJECT_UNAUTHORIZED
  server?.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

test('the official client dials /v1/realtime?intent=transcription with its key as a subprotocol, reads the session events, and an error event leaves the socket open', async () => {
  const client = new OpenAI({ apiKey: 'svc_live_probe', baseURL: `https://127.0.0.1:${server.port}/v1` })
  const rt = new OpenAIRealtimeWebSocket({ intent: 'transcription' }, client)
  const received: string[] = []
  const errors: Array<{ code?: string | null; param?: string | null; event_id?: string | null }> = []
  rt.on('event', (e) => void received.push(e.type))
  rt.on('error', (e) => void errors.push(e.error ?? {}))
  const committed = new Promise<void>((resolve) => rt.on('input_audio_buffer.committed', () => resolve()))
  rt.on('session.created', () => {
    rt.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, transcription: { language: 'en' } } } } })
    rt.send({ type: 'response.create', event_id: 'bad_1' } as never)
    rt.send({ type: 'input_audio_buffer.commit' })
  })
  const updated = await new Promise<{ session: { audio?: { input?: { transcription?: { language?: string } } } } }>((resolve) => rt.on('session.updated', (e) => resolve(e as never)))
  await committed
  rt.close()

  expect(seen).toEqual({ url: '/v1/realtime?intent=transcription', protocols: 'realtime, openai-insecure-api-key.svc_live_probe' })
  expect(updated.session.audio?.input?.transcription?.language).toBe('en')
  expect(errors).toEqual([{ type: 'invalid_request_error', code: 'unknown_event', param: 'type', event_id: 'bad_1', message: expect.any(String) } as never])
  expect(received).toEqual(['session.created', 'session.updated', 'error', 'input_audio_buffer.committed'])
})

test('the official client transcribes the LibriVox clip through the real /v1/realtime route (TEST-ONLY replay recognizer): deltas and completed turns', async () => {
  const t = createTestApp({ liveRecognizers: replayLibrivoxRecognizers() })
  const route = t.app.realtime!
  // the route's own handler and WebSocket handlers behind TLS (http/listen.ts serves plain HTTP; TLS is a proxy's in production)
  const tlsServer = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: Bun.file(join(dir, 'cert.pem')), key: Bun.file(join(dir, 'key.pem')) },
    fetch: (req, srv) => route.handle(req, srv as never),
    websocket: route.websocket,
  } as Parameters<typeof Bun.serve>[0])
  try {
    const key = await t.key({ email: 'official@example.com' })
    const client = new OpenAI({ apiKey: key, baseURL: `https://127.0.0.1:${tlsServer.port}/v1` })
    const rt = new OpenAIRealtimeWebSocket({ intent: 'transcription' }, client)
    const deltas: string[] = []
    const completed: string[] = []
    rt.on('conversation.item.input_audio_transcription.delta', e => void deltas.push(e.delta ?? ""))
    const done = new Promise<void>(resolve => rt.on('conversation.item.input_audio_transcription.completed', e => {
      completed.push(e.transcript)
      if (completed.length === 2) resolve()
    }))
    const pcm = speechWav(12).subarray(44)
    rt.on('session.updated', () => {
      for (let at = 0; at < 10.5 * 16000 * 2; at += 3200) rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 3200)).toString('base64') })
    })
    rt.on('session.created', () => rt.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } } as never))
    await done
    rt.close()
    expect(completed).toEqual(['and mr john guess what and then at leisure to consider how much there might be greatly in his power to do how about', 'he was not until this blows young man'])
    expect(deltas.slice(0, 4)).toEqual(['and', ' mr', ' john', ' guess'])
  } finally {
    tlsServer.stop(true)
  }
})
