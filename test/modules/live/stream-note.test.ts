/**
 * A finished live stream's note as the web library shows it: notesvc.stream.finished names the note's
 * page, which opens, and the recording plays there (GET /notes/{id}/media), as an upload's does.
 * Through real HTTP on loopback, signed in as a browser is (browser-credential.ts), with the TEST-ONLY
 * replay recognizer (test/fixtures/replay-recognizer.ts).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { listen } from '../../../src/http/listen'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { sessionCookie } from '../../helpers/web'
import { replayLibrivoxRecognizers } from '../../fixtures/replay-recognizer'
import { speechWav } from '../../fixtures/speech'

const EMAIL = 'stream-note@example.com'
const PASSWORD = 'a stream note passphrase'
const t = createTestApp({ liveRecognizers: replayLibrivoxRecognizers() })
const server = listen(t.app, { port: 0, hostname: '127.0.0.1' })
const site = `http://127.0.0.1:${server.port!}`
afterAll(() => void server.stop(true))

let cookie = ''
let csrf = ''
beforeAll(async () => {
  await t.services.web.setPassword(EMAIL, PASSWORD)
  cookie = await sessionCookie(site, request => fetch(request), EMAIL, PASSWORD, '/')
  csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(await (await fetch(`${site}/`, { headers: { cookie } })).text())![1]!
})

test('stream.finished names the note page, which opens, and its recording plays: a WAV of the audio sent', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/realtime?intent=transcription`, { protocols: ['realtime', `notesvc-csrf.${csrf}`], headers: { cookie, origin: site } } as never)
  const events: any[] = []
  ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } }))
  // three seconds of speech at 16 kHz: 96,000 bytes
  const pcm = speechWav(3).subarray(44, 44 + 3 * 16000 * 2)
  for (let at = 0; at < pcm.byteLength; at += 3200) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 3200)).toString('base64') }))
  ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
  const finished = await until('notesvc.stream.finished', () => events.find(e => e.type === 'notesvc.stream.finished'), 30_000)
  expect(finished.audio_seconds).toBe(3)

  // the public URL's (the test app's is http://localhost), asked of this server
  expect(finished.note.page).toBe(`http://localhost/notes/${finished.note.id}`)
  const page = await fetch(`${site}${new URL(finished.note.page).pathname}`, { headers: { cookie }, redirect: 'manual' })
  expect(page.status).toBe(200)
  expect(await page.text()).toContain(`data-note-id="${finished.note.id}"`)

  const media = await fetch(`${site}/notes/${finished.note.id}/media?library=live`, { headers: { cookie } })
  const bytes = new Uint8Array(await media.arrayBuffer())
  expect([media.status, media.headers.get('content-type'), bytes.byteLength]).toEqual([200, 'audio/wav', 44 + 96_000])
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('RIFF')
  expect(Buffer.from(bytes.subarray(44)).equals(Buffer.from(pcm))).toBe(true)
}, 60_000)
