/**
 * Live streams that survive (modules/live/streams.ts) through the real /v1/realtime route on loopback,
 * on SQLite and on PostgreSQL: the note made at the end from the audio kept in the storage (byte for
 * byte what was sent), charging per started minute, a dropped connection resumed with its token
 * (nothing missing, nothing twice) or not resumed (the note made from what arrived), the credits
 * running out mid-stream, the sandbox. The engine is the real one (PocketSphinx's library); audio is
 * sent faster than real time (the engine and the storage do not care).
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { listen } from '../../../src/http/listen'
import { engineRecognizers } from '../../../src/modules/live/engine-recognizer'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { until } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'

/** 16 kHz speech: the stream is told 16000 by session.update */
const PCM = speechWav(75).subarray(44)
const RATE = 16000
const bytesOf = (seconds: number) => Math.round(seconds * RATE) * 2

interface Stream { ws: WebSocket; events: any[]; closed: Promise<number>; next(type: string, pred?: (e: any) => boolean): Promise<any> }

for (const b of backEnds) describe.skipIf(b.skip)(`live streams on ${b.name}`, () => {
  const stores: Array<{ close(): Promise<void> }> = []
  const servers: Array<{ stop(force: boolean): void }> = []
  afterAll(async () => {
    for (const s of servers) s.stop(true)
    for (const s of stores) await s.close()
  })

  async function app(env: Record<string, string> = {}, shared?: Awaited<ReturnType<typeof b.open>>) {
    const store = shared ?? (await b.open())
    if (!shared) stores.push(store)
    const t = createTestApp({ store, liveRecognizers: engineRecognizers(), env: { NOTESVC_LIVE_RESUME_SECONDS: '1', ...env } })
    const server = listen(t.app, { port: 0, hostname: '127.0.0.1' })
    servers.push(server)
    return { t, store, base: `127.0.0.1:${server.port}/v1/realtime?intent=transcription` }
  }

  async function connect(base: string, key: string, query = ''): Promise<Stream> {
    const ws = new WebSocket(`ws://${base}${query}`, { protocols: ['realtime', `openai-insecure-api-key.${key}`] } as never)
    const events: any[] = []
    ws.onmessage = m => void events.push(JSON.parse(String(m.data)))
    const closed = new Promise<number>(resolve => ws.addEventListener('close', e => resolve(e.code)))
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)))
    const next = (type: string, pred: (e: any) => boolean = () => true) => until(`a ${type} event`, () => events.find(e => e.type === type && pred(e)), 60_000)
    await next('session.created')
    ws.send(JSON.stringify({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: RATE } } } } }))
    await next('session.updated')
    return { ws, events, closed, next }
  }

  function send(ws: WebSocket, from: number, to: number) {
    for (let at = from; at < to; at += 3200) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: Buffer.from(PCM.subarray(at, Math.min(to, at + 3200))).toString('base64') }))
  }

  /** the note's stored recording: its WAV's samples */
  async function recording(t: ReturnType<typeof createTestApp>, noteId: string): Promise<Uint8Array> {
    const copy = await t.services.storage.localCopy(`uploads/${noteId}`)
    try {
      const wav = new Uint8Array(readFileSync(copy.path))
      expect(new DataView(wav.buffer).getUint32(24, true)).toBe(RATE)
      return wav.subarray(44)
    } finally {
      await copy.release()
    }
  }

  async function usage(t: ReturnType<typeof createTestApp>, key: string) {
    return (await t.call('GET', '/v1/usage', { token: key })).body
  }

  test('finished by the client: the note is made from every byte sent, goes through the usual stages to Done, and one started minute is charged', async () => {
    const { t, base } = await app()
    const key = await t.key({ email: 'finish@example.com' })
    const s = await connect(base, key, '&style=meeting-notes&title=Standup')
    const created = await s.next('notesvc.stream.created')
    expect(created.stream).toMatchObject({ resume_seconds: 1, audio_seconds: 0, sample_rate: 24000 }) // OpenAI's default, before the session.update
    expect(created.stream.resume_token.length).toBeGreaterThanOrEqual(43) // 256 bits, base64url
    const noteId = created.stream.note_id
    expect((await t.call('GET', `/v1/notes/${noteId}/status`, { token: key })).body).toMatchObject({ status: 'Summarizing', processingStage: 'recording' })

    send(s.ws, 0, bytesOf(8))
    await s.next('notesvc.stream.kept', e => e.audio_seconds >= 5)
    s.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    const finished = await s.next('notesvc.stream.finished')
    expect(await s.closed).toBe(1000)
    expect(finished).toMatchObject({ note: { id: noteId, status: 'Summarizing' }, credits_charged: 1, audio_seconds: 8 })
    expect(s.events.some(e => e.type === 'conversation.item.input_audio_transcription.completed' && e.transcript.length > 0)).toBe(true)

    expect(await recording(t, noteId)).toEqual(PCM.subarray(0, bytesOf(8)))
    await t.services.workers.start()
    try {
      const done = await until('the note Done', async () => {
        const n = (await t.call('GET', `/v1/notes/${noteId}`, { token: key })).body
        return n.status === 'Done' || n.status === 'Error' ? n : undefined
      }, 120_000, 200)
      expect(done).toMatchObject({ status: 'Done', title: expect.any(String), styleId: 'meeting-notes', source: 'live', type: 'audio' })
      expect(done.originalTranscription.split(' ').length).toBeGreaterThan(10)
    } finally {
      await t.services.workers.stop()
    }
    const u = await usage(t, key)
    const charges = u.recent.filter((r: any) => r.noteId === noteId)
    expect(charges.map((r: any) => [r.operation, r.credits])).toEqual([['liveTranscription', 1]])
  }, 180_000)

  test('a dropped connection resumed with its token: the server says what it kept, the client sends the rest from there, and the recording has every byte once', async () => {
    const { t, base } = await app({ NOTESVC_LIVE_RESUME_SECONDS: '60' })
    const key = await t.key({ email: 'resume@example.com' })
    const first = await connect(base, key)
    const { stream } = await first.next('notesvc.stream.created')
    send(first.ws, 0, bytesOf(5.3))
    await first.next('notesvc.stream.kept', e => e.audio_seconds >= 4)
    first.ws.close(4001, 'network lost') // not a normal close: the stream stays resumable
    await first.closed
    await until('the stream detached', async () => (await t.services.live.sweep(), (await t.call('GET', `/v1/notes/${stream.note_id}/status`, { token: key })).body.processingStage === 'recording' || undefined))

    const again = await connect(base, key, `&resume=${stream.resume_token}`)
    const resumed = await again.next('notesvc.stream.resumed')
    expect(resumed.stream).toMatchObject({ id: stream.id, note_id: stream.note_id, sample_rate: RATE })
    const kept = resumed.stream.audio_seconds
    expect(kept).toBeGreaterThanOrEqual(4)
    expect(kept).toBeLessThanOrEqual(5.3)
    // a second connection with the same token takes the stream over; the first is told and closed
    send(again.ws, bytesOf(kept), bytesOf(9))
    again.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    const finished = await again.next('notesvc.stream.finished')
    expect(finished.audio_seconds).toBe(9)
    // the resumed engine's times count from the stream's start, not from the resume
    const started = again.events.filter(e => e.type === 'input_audio_buffer.speech_started')
    expect(started.length).toBeGreaterThan(0)
    for (const e of started) expect(e.audio_start_ms).toBeGreaterThanOrEqual(kept * 1000 - 300)
    expect(await recording(t, stream.note_id)).toEqual(PCM.subarray(0, bytesOf(9)))
    // the token is spent: resuming a finished stream is refused before the upgrade
    const late = await fetch(`http://${base}&resume=${stream.resume_token}`, { headers: { authorization: `Bearer ${key}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } })
    expect(late.status).toBe(409)
    expect((await late.json()).error.message).toContain(stream.note_id)
    const other = await t.key({ email: 'other@example.com' })
    const foreign = await fetch(`http://${base}&resume=${stream.resume_token}`, { headers: { authorization: `Bearer ${other}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } })
    expect(foreign.status).toBe(404)
  }, 120_000)

  test('a dropped connection not resumed within the grace period: the note is made from what arrived', async () => {
    const { t, base } = await app({ NOTESVC_LIVE_RESUME_SECONDS: '1' })
    const key = await t.key({ email: 'gone@example.com' })
    const s = await connect(base, key)
    const { stream } = await s.next('notesvc.stream.created')
    send(s.ws, 0, bytesOf(3.5))
    await s.next('notesvc.stream.kept', e => e.audio_seconds >= 3)
    s.ws.close(4001, 'gone')
    await s.closed
    await until('the note made by the sweep', async () => {
      await t.services.live.sweep()
      return (await t.call('GET', `/v1/notes/${stream.note_id}/status`, { token: key })).body.processingStage === 'queued' || undefined
    }, 20_000, 300)
    // what was held when the connection dropped was written before the stream was left: all 3.5 s
    expect(await recording(t, stream.note_id)).toEqual(PCM.subarray(0, bytesOf(3.5)))
  }, 60_000)

  test('credits running out mid-stream: the minute they cannot cover ends the stream with insufficient_credits, and the note keeps what was paid for', async () => {
    const { t, base } = await app()
    const key = await t.key({ email: 'poor@example.com' })
    const account = await t.services.accounts.requireAccount('poor@example.com')
    const balance = await t.services.credits.balance(account.id)
    await t.services.credits.charge({ accountId: account.id, operation: 'test', credits: balance.totalRemaining - 1, source: 'api_key' })
    const s = await connect(base, key)
    const { stream } = await s.next('notesvc.stream.created')
    send(s.ws, 0, bytesOf(70))
    const error = await s.next('error')
    expect(error.error).toMatchObject({ code: 'insufficient_credits' })
    expect(error.error.message).toMatch(/becomes the note/)
    const finished = await s.next('notesvc.stream.finished')
    expect(finished).toMatchObject({ credits_charged: 1, audio_seconds: 60 })
    expect(await recording(t, stream.note_id)).toEqual(PCM.subarray(0, bytesOf(60)))
    expect((await t.services.credits.balance(account.id)).totalRemaining).toBe(0)
  }, 120_000)

  test('a sandbox key: the fixed sandbox text at the pace of the audio, nothing charged, the fixed sandbox note', async () => {
    const { t, base } = await app()
    const key = await t.key({ email: 'sandbox@example.com', sandbox: true })
    const s = await connect(base, key)
    const { stream } = await s.next('notesvc.stream.created')
    send(s.ws, 0, bytesOf(4.5))
    const completed = await s.next('conversation.item.input_audio_transcription.completed')
    expect(completed.transcript).toBe('Welcome everyone to the weekly planning meeting.')
    // the deltas join into the completed transcript
    expect(s.events.filter(e => e.type === 'conversation.item.input_audio_transcription.delta').map(e => e.delta).join('')).toBe('Welcome everyone to the weekly planning meeting.')
    s.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    expect(await s.next('notesvc.stream.finished')).toMatchObject({ credits_charged: 0, note: { status: 'Done' } })
    const note = (await t.call('GET', `/v1/notes/${stream.note_id}`, { token: key })).body
    expect(note.originalTranscription).toStartWith('Welcome everyone to the weekly planning meeting. First, the launch date')
  }, 60_000)

  test('the per-account limit counts the streams open on every node (two apps on one database); the server limit counts this server\'s; each refused with 503 and Retry-After before the upgrade', async () => {
    const env = { NOTESVC_LIVE_MAX_STREAMS_PER_ACCOUNT: '1', NOTESVC_LIVE_MAX_STREAMS: '2' }
    const one = await app(env)
    const two = await app(env, one.store)
    const key = await one.t.key({ email: 'limits@example.com' })
    const s = await connect(one.base, key)
    await s.next('notesvc.stream.created')
    const upgrade = (base: string, k: string) => fetch(`http://${base}`, { headers: { authorization: `Bearer ${k}`, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } })
    const refused = await upgrade(two.base, key)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect((await refused.json()).error.message).toMatch(/this account has 1 live stream running, its limit/i)
    // other accounts fill the second node's two places; the third is refused by the server's limit
    const a = await connect(two.base, await one.t.key({ email: 'a@example.com' }))
    const b2 = await connect(two.base, await one.t.key({ email: 'b@example.com' }))
    const full = await upgrade(two.base, await one.t.key({ email: 'c@example.com' }))
    expect(full.status).toBe(503)
    expect((await full.json()).error.message).toMatch(/this server has 2 live streams running, its limit/)
    for (const x of [s, a, b2]) x.ws.close()
  }, 60_000)

  test('metering off: a stream charges nothing (its minutes recorded at 0 credits, as every operation\'s with metering off)', async () => {
    const { t, base } = await app({ NOTESVC_METERING: 'off' })
    const key = await t.key({ email: 'unmetered@example.com' })
    const s = await connect(base, key)
    const { stream } = await s.next('notesvc.stream.created')
    send(s.ws, 0, bytesOf(2))
    await s.next('notesvc.stream.kept', e => e.audio_seconds >= 1)
    s.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    expect(await s.next('notesvc.stream.finished')).toMatchObject({ credits_charged: 0, audio_seconds: 2 })
    expect((await usage(t, key)).recent.filter((r: any) => r.noteId === stream.note_id).map((r: any) => [r.operation, r.credits])).toEqual([['liveTranscription', 0]])
  }, 60_000)

  test('a stream finishing longer than the idle timeout (its engine behind) still sends its last turns and the finished event', async () => {
    const { t, base } = await app({ NOTESVC_LIVE_IDLE_SECONDS: '1' })
    const key = await t.key({ email: 'behind@example.com' })
    const s = await connect(base, key)
    // 25 s of speech at once: the engine needs seconds of CPU to catch up, the client says nothing more
    send(s.ws, 0, bytesOf(25))
    s.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    const finished = await s.next('notesvc.stream.finished')
    expect(finished.audio_seconds).toBe(25)
    expect(s.events.filter(e => e.type === 'error')).toEqual([])
    expect(s.events.filter(e => e.type === 'conversation.item.input_audio_transcription.completed').length).toBeGreaterThanOrEqual(3)
  }, 60_000)

  test('a recording that cannot be put together from its parts: an Error note that says the audio is kept, and the parts left in place', async () => {
    const { t, base } = await app()
    const key = await t.key({ email: 'lostpart@example.com' })
    const s = await connect(base, key)
    const { stream } = await s.next('notesvc.stream.created')
    send(s.ws, 0, bytesOf(3))
    await s.next('notesvc.stream.kept', e => e.audio_seconds >= 3)
    // the first second's part goes missing from the storage (a disk fault, an operator's mistake)
    await t.services.storage.delete(`live/${stream.id}/0/000001.pcm`)
    s.ws.send(JSON.stringify({ type: 'notesvc.stream.finish' }))
    expect(await s.next('notesvc.stream.finished')).toMatchObject({ note: { status: 'Error' }, credits_charged: 1 })
    const status = (await t.call('GET', `/v1/notes/${stream.note_id}/status`, { token: key })).body
    expect(status).toMatchObject({ status: 'Error', errorCode: 'live_audio_unreadable' })
    expect(status.errorMessage).toContain(`the audio is kept on the server under live/${stream.id}/`)
    expect(await t.services.storage.stat(`live/${stream.id}/0/000002.pcm`)).toEqual({ size: bytesOf(1) })
  }, 60_000)
})
