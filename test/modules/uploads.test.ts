import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp } from '../helpers/app'
import { recordingEngine } from '../helpers/engines'
import { makeWav } from '../fixtures/wav'

type TestApp = ReturnType<typeof createTestApp>
const apps: TestApp[] = []
afterAll(async () => { await Promise.all(apps.map(a => a.services.workers.stop())) })

function setup(o: { delayMs?: number; fail?: () => Error | null; env?: Record<string, string> } = {}) {
  const rec = recordingEngine(o)
  const t = createTestApp({ engines: { asr: () => rec.engine }, env: { NOTESVC_WORKERS: '2', ...o.env } })
  apps.push(t)
  t.services.workers.start()
  return { ...t, rec, token: t.key() }
}

/** The upload URL's path and query, to send through app.handle. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '')

async function startUpload(t: TestApp, token: string, body: Record<string, unknown>) {
  const r = await t.call('POST', '/v1/uploads', { token, body })
  expect(r.status).toBe(201)
  return r.body as { noteId: string; uploadUrl: string; headers: Record<string, string> }
}

async function put(t: TestApp, url: string, bytes: Uint8Array, headers: Record<string, string> = {}) {
  const res = await t.app.handle(new Request(`http://localhost${local(url)}`, { method: 'PUT', body: bytes as unknown as BodyInit, headers }))
  return { status: res.status, body: (await res.json()) as any }
}

async function waitForStatus(t: TestApp, token: string, noteId: string, want: string[], timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  const seen: string[] = []
  for (;;) {
    const s = (await t.call('GET', `/v1/notes/${noteId}/status`, { token })).body
    const label = `${s.status}/${s.processingStage}`
    if (seen.at(-1) !== label) seen.push(label)
    if (want.includes(s.status)) return { status: s, seen }
    if (Date.now() > deadline) throw new Error(`note ${noteId} still ${label} after ${timeoutMs} ms (seen ${seen.join(' → ')})`)
    await Bun.sleep(10)
  }
}

describe('upload → PUT → complete → Done (disk storage)', () => {
  test('charges one credit per started minute and fills transcript and summary', async () => {
    const t = setup()
    const wav = makeWav({ seconds: 61, sampleRate: 8000, channels: 2 })
    const up = await startUpload(t, t.token, { fileName: 'standup.wav', contentType: 'audio/wav', fileSize: wav.length, styleId: 'bulletpoints' })
    expect(up.uploadUrl).toStartWith(`http://localhost/v1/uploads/${up.noteId}/file?expires=`)
    expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.token })).body.processingStage).toBe('awaiting_upload')

    const stored = await put(t, up.uploadUrl, wav, up.headers)
    expect(stored).toEqual({ status: 200, body: { noteId: up.noteId, receivedBytes: wav.length } })

    const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(done.status).toBe(202)
    expect(done.body).toMatchObject({ noteId: up.noteId, creditsCharged: 2, durationSeconds: 61, alreadyCompleted: false, poll: `http://localhost/v1/notes/${up.noteId}/status` })
    expect(done.headers.get('x-credits-remaining')).toBe('58')

    const { status } = await waitForStatus(t, t.token, up.noteId, ['Done', 'Error'])
    expect(status).toEqual({ status: 'Done', processingStage: null, isComplete: true, hasError: false, errorMessage: null, errorCode: null })
    // 61 s of 8 kHz stereo arrived as 61 s of 16 kHz mono, tone intact
    const total = t.rec.calls.reduce((n, c) => n + c.samples, 0)
    expect(total).toBeGreaterThanOrEqual(61 * 16_000 - 2)
    expect(total).toBeLessThanOrEqual(61 * 16_000)
    expect(t.rec.calls[0]!.rms).toBeGreaterThan(0.2)
    const note = (await t.call('GET', `/v1/notes/${up.noteId}`, { token: t.token })).body
    expect(note.originalTranscription).toContain('Heard ')
    expect(note.structuredContent.bulletpoints.bullets.length).toBeGreaterThan(0)
    expect(note.language).toBe('en')
    expect((await t.call('GET', `/v1/notes/${up.noteId}/transcript`, { token: t.token })).status).toBe(200)

    const again = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ alreadyCompleted: true, creditsCharged: 0, status: 'Done' })
    const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
    expect(usage.recent).toHaveLength(1)
    expect(usage.recent[0]).toMatchObject({ operation: 'completeUpload', credits: 2, source: 'api_key', noteId: up.noteId })
    expect(usage.balance.totalRemaining).toBe(58)
  })

  test('20 concurrent completes charge once: one 202, nineteen 200', async () => {
    const t = setup({ env: { NOTESVC_RATE_LIMITS: 'processing=100' } })
    const wav = makeWav({ seconds: 130, sampleRate: 8000 })
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, wav)
    const results = await Promise.all(Array.from({ length: 20 }, () => t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })))
    expect(results.map(r => r.status).sort()).toEqual([...Array(19).fill(200), 202])
    expect(results.reduce((n, r) => n + r.body.creditsCharged, 0)).toBe(3)
    const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
    expect(usage.recent.map((r: any) => r.credits)).toEqual([3])
    expect(usage.balance.totalRemaining).toBe(57)
  })

  test('complete before the file arrived is a 409 and charges nothing', async () => {
    const t = setup()
    const up = await startUpload(t, t.token, { fileName: 'a.mp3', contentType: 'audio/mpeg' })
    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('conflict')
    expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
  })

  test('a PUT larger than the declared size is refused with 413 and leaves no file behind', async () => {
    const t = setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav', fileSize: 1000 })
    const r = await put(t, up.uploadUrl, new Uint8Array(5000))
    expect(r.status).toBe(413)
    expect(r.body.error.code).toBe('payload_too_large')
    // also when the client does not say the length up front (streamed body)
    const stream = new ReadableStream({ start(c) { for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(1000)); c.close() } })
    const res = await t.app.handle(new Request(`http://localhost${local(up.uploadUrl)}`, { method: 'PUT', body: stream, duplex: 'half' } as RequestInit))
    expect(res.status).toBe(413)
    const uploads = join(t.config.dataDir, 'media', 'uploads')
    expect(readdirSync(uploads)).toEqual([])
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(409)
  })

  test('a PUT with a bad or expired signature is 401 and stores nothing', async () => {
    const t = setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    const tampered = up.uploadUrl.replace(/signature=([0-9a-f])/, (_m, c) => `signature=${c === '0' ? '1' : '0'}`)
    expect((await put(t, tampered, makeWav({ seconds: 1 }))).status).toBe(401)
    const expired = up.uploadUrl.replace(/expires=\d+/, 'expires=1000')
    expect((await put(t, expired, makeWav({ seconds: 1 }))).body.error.code).toBe('invalid_token')
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(409)
  })

  test('a corrupt file ends in Error with media_unreadable, and the charge is refunded', async () => {
    const t = setup()
    const up = await startUpload(t, t.token, { fileName: 'broken.mp3', contentType: 'audio/mpeg' })
    await put(t, up.uploadUrl, crypto.getRandomValues(new Uint8Array(4096)))
    const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(done.status).toBe(202)
    expect(done.body.creditsCharged).toBe(1)
    const { status } = await waitForStatus(t, t.token, up.noteId, ['Done', 'Error'])
    expect(status).toMatchObject({ status: 'Error', hasError: true, isComplete: false, errorCode: 'media_unreadable', processingStage: 'converting' })
    expect(status.errorMessage).toContain('could not be read')
    const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
    expect(usage.recent.map((r: any) => [r.operation, r.credits])).toEqual([['refund:completeUpload', -1], ['completeUpload', 1]])
    expect(usage.balance.totalRemaining).toBe(60)
    expect(usage.spentThisPeriod).toBe(0)
    expect(t.rec.calls).toEqual([])
  })

  test('a transient engine failure is retried, and the job then finishes', async () => {
    let failures = 1
    const t = setup({ fail: () => (failures-- > 0 ? new Error('engine hiccup') : null) })
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 3 }))
    await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    const { status } = await waitForStatus(t, t.token, up.noteId, ['Done', 'Error'])
    expect(status.status).toBe('Done')
    expect(t.services.jobs.latestForNote(up.noteId)).toMatchObject({ status: 'done', attempts: 2, last_error: 'engine hiccup' })
  })

  test('402 when the credits do not cover the recording, and nothing changes', async () => {
    const t = setup()
    const account = t.services.accounts.requireAccount('user@example.com')
    t.services.usage.charge({ accountId: account.id, operation: 'test', credits: 59, source: 'api_key' })
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 70, sampleRate: 4000 }))
    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(r.status).toBe(402)
    expect(r.body.error.code).toBe('insufficient_credits')
    expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.token })).body.processingStage).toBe('awaiting_upload')
    t.services.accounts.addPurchasedCredits('user@example.com', 1)
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(202)
  })

  test('a missing Whisper model ends the job with engine_unavailable, the command that fixes it, and a refund', async () => {
    const t = createTestApp({ env: { NOTESVC_WHISPER_MODEL: 'tiny.en' } })
    apps.push(t)
    t.services.workers.start()
    const token = t.key()
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 2 }))
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
    const { status } = await waitForStatus(t, token, up.noteId, ['Done', 'Error'])
    expect(status).toMatchObject({ status: 'Error', errorCode: 'engine_unavailable', processingStage: 'converting' })
    expect(status.errorMessage).toContain('bun run cli models pull tiny.en')
    expect((await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining).toBe(60)
  })

  test('deleting the note deletes its media', async () => {
    const t = setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 1 }))
    expect(await t.services.storage.stat(`uploads/${up.noteId}`)).toEqual({ size: 44 + 32_000 })
    expect((await t.call('DELETE', `/v1/notes/${up.noteId}`, { token: t.token })).status).toBe(204)
    expect(await t.services.storage.stat(`uploads/${up.noteId}`)).toBeNull()
  })
})
