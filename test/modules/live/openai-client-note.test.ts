/**
 * The acceptance path end to end: the official `openai` package's realtime client
 * (OpenAIRealtimeWebSocket, intent transcription) transcribes the LibriVox clips through notesvc's
 * /v1/realtime with the REAL live engine, over TLS on loopback (the client dials wss: only), sending
 * OpenAI's default 24 kHz pcm16 (made by ffmpeg); its close() (code 1000) ends the stream, and the note
 * made from the kept audio goes through the usual stages to Done, with speakers and a summary.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import OpenAI from 'openai'
import { OpenAIRealtimeWebSocket } from 'openai/realtime/websocket'
import { engineRecognizers } from '../../../src/modules/live/engine-recognizer'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'

const dir = mkdtempSync(join(tmpdir(), 'rt-note-'))
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
  // bun runs the next test files in this same process: their TLS must verify again
  delete process.env.NODE_TLS_REJECT_UNAUTHORIZED
})

test('the official openai realtime client: deltas and completed turns of the LibriVox clips, then the note with speakers and a summary', async () => {
  const made = Bun.spawnSync(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'])
  expect(made.exitCode).toBe(0)
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0' // the self-signed certificate made above; this process only
  writeFileSync(join(dir, 'clips.wav'), speechWav(20))
  expect(Bun.spawnSync(['ffmpeg', '-v', 'error', '-y', '-i', join(dir, 'clips.wav'), '-ar', '24000', '-ac', '1', '-f', 's16le', join(dir, 'clips.pcm')]).exitCode).toBe(0)
  const pcm = new Uint8Array(readFileSync(join(dir, 'clips.pcm')))

  const t = createTestApp({ liveRecognizers: engineRecognizers(), env: { NOTESVC_DIARIZATION: 'auto' } })
  const route = t.app.realtime!
  const tls = Bun.serve({
    port: 0, hostname: '127.0.0.1',
    tls: { cert: Bun.file(join(dir, 'cert.pem')), key: Bun.file(join(dir, 'key.pem')) },
    fetch: (req, srv) => route.handle(req, srv as never),
    websocket: route.websocket,
  } as Parameters<typeof Bun.serve>[0])
  try {
    const key = await t.key({ email: 'official-note@example.com' })
    const rt = new OpenAIRealtimeWebSocket({ intent: 'transcription' }, new OpenAI({ apiKey: key, baseURL: `https://127.0.0.1:${tls.port}/v1` }))
    const received: any[] = []
    rt.socket.addEventListener('message', m => void received.push(JSON.parse(String(m.data))))
    const deltas: string[] = []
    const completed: string[] = []
    rt.on('conversation.item.input_audio_transcription.delta', e => void deltas.push(e.delta ?? ''))
    rt.on('conversation.item.input_audio_transcription.completed', e => void completed.push(e.transcript))
    rt.on('error', e => { throw new Error(`realtime error: ${JSON.stringify(e)}`) })
    await new Promise<void>(resolve => rt.socket.addEventListener('open', () => resolve()))
    rt.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, transcription: { model: 'gpt-4o-transcribe', language: 'en' } } } } } as never)
    for (let at = 0; at < pcm.length; at += 4800) rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(pcm.subarray(at, at + 4800)).toString('base64') })
    rt.send({ type: 'input_audio_buffer.commit' })
    await until('the last turn completed', () => received.some(e => e.type === 'notesvc.stream.kept' && e.audio_seconds >= Math.floor(pcm.length / 48000)) && completed.length >= 3 || undefined, 120_000)
    const noteId = received.find(e => e.type === 'notesvc.stream.created').stream.note_id
    rt.close() // code 1000: the stream ends and its note is made

    await until('the note queued', async () => (await t.call('GET', `/v1/notes/${noteId}/status`, { token: key })).body.processingStage !== 'recording' || undefined, 60_000, 200)
    await t.services.workers.start()
    const note = await until('the note Done', async () => {
      const n = (await t.call('GET', `/v1/notes/${noteId}`, { token: key })).body
      return n.status === 'Done' || n.status === 'Error' ? n : undefined
    }, 180_000, 250)
    await t.services.workers.stop()
    const transcript = (await t.call('GET', `/v1/notes/${noteId}/transcript`, { token: key })).body

    console.log(`official openai client: ${deltas.length} deltas (first: ${JSON.stringify(deltas.slice(0, 6))}), ${completed.length} completed turns:\n  ${completed.map(c => JSON.stringify(c)).join('\n  ')}`)
    console.log(`note ${noteId}: ${note.status}, source ${note.source}, title ${JSON.stringify(note.title)}, speakers ${JSON.stringify((transcript.speakers ?? []).map((s: any) => s.name ?? s.label ?? s.id))}, summary ${JSON.stringify(note.summary.slice(0, 160))}…`)
    expect(deltas.length).toBeGreaterThan(5)
    expect(completed.filter(c => c.length > 0).length).toBeGreaterThanOrEqual(3)
    expect(note).toMatchObject({ status: 'Done', source: 'live', type: 'audio' })
    expect(note.summary.length).toBeGreaterThan(20)
    expect(note.originalTranscription.split(' ').length).toBeGreaterThan(20)
    expect((transcript.speakers ?? []).length).toBeGreaterThanOrEqual(1)
  } finally {
    tls.stop(true)
  }
}, 300_000)
