import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, fixedClock } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { makeWav } from '../../fixtures/wav'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'
import { backEnds, freshPostgresUrl } from '../../helpers/backends'
import { createUploadsRepo } from '../../../src/modules/uploads/repo'
import { PostgresStore, type Store } from '../../../src/db/store'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

type TestApp = ReturnType<typeof createTestApp>
const apps: TestApp[] = []
afterAll(async () => { await Promise.all(apps.map(a => a.services.workers.stop())) })

async function setup(o: { delayMs?: number; fail?: () => Error | null; env?: Record<string, string> } = {}) {
  const rec = recordingEngine(o)
  const t = createTestApp({ engines: { asr: () => rec.engine }, env: { NOTESVC_WORKERS: '2', ...o.env } })
  apps.push(t)
  await t.services.workers.start()
  return { ...t, rec, token: await t.key() }
}

/** The upload URL's path and query, to send through app.handle. */
const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, '')

async function startUpload(t: TestApp, token: string, body: Record<string, unknown>) {
  const r = await t.call('POST', '/v1/uploads', { token, body })
  expect(r.status).toBe(201)
  return r.body as { noteId: string; uploadUrl: string; headers: Record<string, string>; expiresAt: string }
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
    const t = await setup()
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
    expect(status).toEqual({ status: 'Done', processingStage: null, progress: 1, isComplete: true, hasError: false, errorMessage: null, errorCode: null })
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
    const t = await setup({ env: { NOTESVC_RATE_LIMITS: 'processing=100' } })
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
    const t = await setup()
    const up = await startUpload(t, t.token, { fileName: 'a.mp3', contentType: 'audio/mpeg' })
    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('conflict')
    expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
  })

  test('a PUT larger than the declared size is refused with 413 and leaves no file behind', async () => {
    const t = await setup()
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

  test('a PUT with a bad signature, or an expires changed without re-signing, is 401 and stores nothing', async () => {
    const t = await setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    const tampered = up.uploadUrl.replace(/signature=([0-9a-f])/, (_m, c) => `signature=${c === '0' ? '1' : '0'}`)
    expect(await put(t, tampered, makeWav({ seconds: 1 }))).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } })
    const extended = up.uploadUrl.replace(/expires=(\d+)/, (_m, e) => `expires=${Number(e) + 3600}`)
    expect(await put(t, extended, makeWav({ seconds: 1 }))).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } })
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(409)
  })

  test('the signed URL, as issued, works for one hour: a PUT after expiresAt is 401 invalid_token, one before it is stored', async () => {
    const clock = fixedClock('2026-05-04T09:00:00.000Z')
    const t = createTestApp({ clock })
    apps.push(t)
    const token = await t.key()
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    // DECISIONS.md "Uploads on disk storage": valid for one hour
    expect(up.expiresAt).toBe('2026-05-04T10:00:00.000Z')
    const wav = makeWav({ seconds: 1 })

    clock.set('2026-05-04T10:00:01.000Z')
    expect(await put(t, up.uploadUrl, wav, up.headers)).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } })
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(409)

    // the very same URL a second before it expires: the signature is good, only the time differed
    clock.set('2026-05-04T09:59:59.000Z')
    expect(await put(t, up.uploadUrl, wav, up.headers)).toEqual({ status: 200, body: { noteId: up.noteId, receivedBytes: wav.length } })
  })

  // Before issue 29 such a file was charged, then refunded when its job failed; now it is measured
  // (decoded) before the charge. A job that fails after a charge still refunds: speech-pipeline.test.ts.
  test('a corrupt file is refused at completion with what ffmpeg said, nothing charged, no job queued', async () => {
    const t = await setup()
    const up = await startUpload(t, t.token, { fileName: 'broken.mp3', contentType: 'audio/mpeg' })
    await put(t, up.uploadUrl, crypto.getRandomValues(new Uint8Array(4096)))
    const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(done.status).toBe(400)
    expect(done.body.error.code).toBe('invalid_request')
    expect(done.body.error.message).toMatch(/^The file uploaded for note_\w+ cannot be transcribed: ffmpeg could not decode the file.*Nothing was charged; PUT a playable recording to the uploadUrl again/)
    const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
    expect(usage.recent).toEqual([])
    expect(usage.balance.totalRemaining).toBe(60)
    expect(await t.services.jobs.latestForNote(up.noteId)).toBeNull()
    expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.token })).body.processingStage).toBe('awaiting_upload')
    expect(t.rec.calls).toEqual([])
  })

  test('a transient engine failure is retried, and the job then finishes', async () => {
    // a chunk that fails is tried once more in the same run; failing twice, the job is retried
    let failures = 2
    const t = await setup({ fail: () => (failures-- > 0 ? new Error('engine hiccup') : null) })
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 3 }))
    await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    const { status } = await waitForStatus(t, t.token, up.noteId, ['Done', 'Error'])
    expect(status.status).toBe('Done')
    expect(await t.services.jobs.latestForNote(up.noteId)).toMatchObject({ status: 'done', attempts: 2, last_error: 'engine hiccup' })
  })

  test('402 when the credits do not cover the recording, and nothing changes', async () => {
    const t = await setup()
    const account = await t.services.accounts.requireAccount('user@example.com')
    await t.services.credits.charge({ accountId: account.id, operation: 'test', credits: 59, source: 'api_key' })
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 70, sampleRate: 4000 }))
    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
    expect(r.status).toBe(402)
    expect(r.body.error.code).toBe('insufficient_credits')
    expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.token })).body.processingStage).toBe('awaiting_upload')
    await t.services.accounts.addPurchasedCredits('user@example.com', 1)
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(202)
  })

  test('with NOTESVC_ASR=whisper forced, a missing model ends the job with engine_unavailable, the command that fixes it, and a refund', async () => {
    const t = createTestApp({ env: { NOTESVC_ASR: 'whisper', NOTESVC_WHISPER_MODEL: 'tiny.en' } })
    apps.push(t)
    await t.services.workers.start()
    const token = await t.key()
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 2 }))
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
    const { status } = await waitForStatus(t, token, up.noteId, ['Done', 'Error'])
    expect(status).toMatchObject({ status: 'Error', errorCode: 'engine_unavailable', processingStage: 'converting' })
    expect(status.errorMessage).toContain('bun run cli models pull tiny.en')
    expect((await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining).toBe(60)
  })

  test('deleting the note deletes its media', async () => {
    const t = await setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 1 }))
    expect(await t.services.storage.stat(`uploads/${up.noteId}`)).toEqual({ size: 44 + 32_000 })
    expect((await t.call('DELETE', `/v1/notes/${up.noteId}`, { token: t.token })).status).toBe(204)
    expect(await t.services.storage.stat(`uploads/${up.noteId}`)).toBeNull()
  })
})

describe('no speech engine installed (NOTESVC_ASR=auto finds neither)', () => {
  /** No Whisper model in the app's models folder, and PocketSphinx looked for where it is not. */
  async function noEngineApp() {
    const t = createTestApp({ config: { pocketsphinx: { program: '/nonexistent/bin/pocketsphinx_continuous' } } })
    apps.push(t)
    await t.services.workers.start()
    return t
  }

  test('completeUpload answers 502 before charging or queueing; the same upload completes once a model is pulled', async () => {
    const t = await noEngineApp()
    const token = await t.key()
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    await put(t, up.uploadUrl, makeWav({ seconds: 2 }))

    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
    expect(r.status).toBe(502)
    expect(r.body.error.code).toBe('upstream_failure')
    expect(r.body.error.message).toContain('`bun run cli models pull base.en`')
    expect(r.body.error.message).toContain('`apt-get install pocketsphinx pocketsphinx-en-us`')
    expect(r.body.error.message).toContain('Nothing was charged')
    const usage = (await t.call('GET', '/v1/usage', { token })).body
    expect(usage.recent).toEqual([])
    expect(usage.balance.totalRemaining).toBe(60)
    expect(await t.services.jobs.latestForNote(up.noteId)).toBeNull()
    expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body).toMatchObject({ processingStage: 'awaiting_upload', hasError: false })

    // the operator pulls a model; the user completes the same upload again
    mkdirSync(t.config.modelsDir, { recursive: true })
    writeTinyWhisperModel(join(t.config.modelsDir, 'ggml-base.en.bin'), { multilingual: false })
    const again = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({ creditsCharged: 1, alreadyCompleted: false })
    const { status } = await waitForStatus(t, token, up.noteId, ['Done', 'Error'], 60_000)
    expect(status).toMatchObject({ status: 'Done', errorCode: null })
    expect((await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining).toBe(59)
  }, 90_000)

  test('a sandbox key needs no engine: completing still gives the fixed result, free', async () => {
    const t = await noEngineApp()
    const token = await t.key({ sandbox: true })
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    const r = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ status: 'Done', creditsCharged: 0 })
  })
})

describe('temporary files of interrupted uploads (reclaimed at start-up)', () => {
  const HOUR = 60 * 60 * 1000

  /** What a PUT cut off by kill -9 leaves: `write`'s hidden temporary file beside the final one. */
  function leftover(t: TestApp, noteId: string, bytes: number): string {
    const dir = join(t.config.dataDir, 'media', 'uploads')
    mkdirSync(dir, { recursive: true })
    const path = join(dir, `.${noteId}.${crypto.randomUUID()}.part`)
    writeFileSync(path, new Uint8Array(bytes))
    return path
  }

  test('a leftover of an upload still awaiting its file stays for the upload URL\'s lifetime (1 hour), then goes', async () => {
    const clock = fixedClock(new Date())
    const t = createTestApp({ clock })
    const token = await t.key()
    const up = await startUpload(t, token, { fileName: 'a.wav', contentType: 'audio/wav' })
    const part = leftover(t, up.noteId, 1000)
    clock.advance(HOUR - 60_000)
    expect(await t.services.uploads.reclaimInterruptedUploads()).toEqual({ files: 0, bytes: 0 })
    expect(existsSync(part)).toBe(true)
    clock.advance(2 * 60_000)
    expect(await t.services.uploads.reclaimInterruptedUploads()).toEqual({ files: 1, bytes: 1000 })
    expect(existsSync(part)).toBe(false)
  })

  test('a leftover goes at once when its upload no longer awaits the file: note deleted, upload completed, or no such upload', async () => {
    const t = await setup()
    const deleted = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    const completed = await startUpload(t, t.token, { fileName: 'b.wav', contentType: 'audio/wav' })
    const waiting = await startUpload(t, t.token, { fileName: 'c.wav', contentType: 'audio/wav' })
    expect((await t.call('DELETE', `/v1/notes/${deleted.noteId}`, { token: t.token })).status).toBe(204)
    await put(t, completed.uploadUrl, makeWav({ seconds: 1 }))
    expect((await t.call('POST', `/v1/uploads/${completed.noteId}/complete`, { token: t.token })).status).toBe(202)
    const gone = [leftover(t, deleted.noteId, 100), leftover(t, completed.noteId, 200), leftover(t, 'note_01nosuchupload0000000000000', 300)]
    const kept = leftover(t, waiting.noteId, 400)
    expect(await t.services.uploads.reclaimInterruptedUploads()).toEqual({ files: 3, bytes: 600 })
    for (const path of gone) expect(existsSync(path)).toBe(false)
    expect(existsSync(kept)).toBe(true)
    // the completed upload's file itself is untouched
    expect(await t.services.storage.stat(`uploads/${completed.noteId}`)).toEqual({ size: 44 + 32_000 })
  })

  test('a PUT under way keeps its temporary file through a sweep, and completes', async () => {
    const t = await setup()
    const up = await startUpload(t, t.token, { fileName: 'a.wav', contentType: 'audio/wav' })
    let sender!: ReadableStreamDefaultController<Uint8Array>
    const body = new ReadableStream<Uint8Array>({ start(c) { sender = c } })
    const pending = t.app.handle(new Request(`http://localhost${local(up.uploadUrl)}`, { method: 'PUT', body, duplex: 'half' } as RequestInit))
    sender.enqueue(new Uint8Array(2 << 20))
    const dir = join(t.config.dataDir, 'media', 'uploads')
    const parts = () => (existsSync(dir) ? readdirSync(dir).filter(f => f.endsWith('.part')) : [])
    for (let i = 0; parts().length === 0; i++) {
      if (i > 500) throw new Error('the PUT never started writing')
      await Bun.sleep(10)
    }
    expect(await t.services.uploads.reclaimInterruptedUploads()).toEqual({ files: 0, bytes: 0 })
    sender.enqueue(new Uint8Array(1 << 20))
    sender.close()
    const res = await pending
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ noteId: up.noteId, receivedBytes: 3 << 20 })
    expect(parts()).toEqual([])
  })
})

for (const b of backEnds) {
  describe.skipIf(b.skip)(`the uploads repository on ${b.name}`, () => {
    const stores: Store[] = []
    afterAll(async () => { for (const s of stores.splice(0)) await s.close() })
    const at = '2026-03-01T10:00:00.000Z'

    async function withNote(noteId: string, store?: Store) {
      store ??= await b.open()
      stores.push(store)
      await store.run(`INSERT INTO accounts (id, email, plan, grant_period, created_at) VALUES ('acct_1', 'a@example.com', 'free', '2026-03', ?)`, [at])
      await store.run(`INSERT INTO notes (id, account_id, sandbox, status, type, date_created, updated_at) VALUES (?, 'acct_1', 0, 'Summarizing', 'audio', ?, ?)`, [noteId, at, at])
      return { store, repo: createUploadsRepo(store) }
    }

    test('a 5 GB upload\'s sizes and duration read back as numbers; only the library that owns it finds it', async () => {
      const { repo } = await withNote('note_big')
      await repo.insert({ note_id: 'note_big', account_id: 'acct_1', sandbox: 0, storage_key: 'uploads/note_big', file_name: 'big.wav', content_type: 'audio/wav', declared_size: 5_000_000_000, source: 'api_key', created_at: at })
      await repo.markReceived('note_big', 4_999_999_999, at)
      expect(await repo.get({ accountId: 'acct_1', sandbox: false }, 'note_big')).toMatchObject({ declared_size: 5_000_000_000, received_size: 4_999_999_999, sandbox: 0, credits_charged: 0, completed_at: null })
      expect(await repo.get({ accountId: 'acct_1', sandbox: true }, 'note_big')).toBeNull()
      expect(await repo.get({ accountId: 'acct_2', sandbox: false }, 'note_big')).toBeNull()
    })

    test('an upload is marked completed once: the second mark changes nothing', async () => {
      const { repo } = await withNote('note_once')
      await repo.insert({ note_id: 'note_once', account_id: 'acct_1', sandbox: 0, storage_key: 'uploads/note_once', file_name: 'a.wav', content_type: 'audio/wav', declared_size: null, source: 'api_key', created_at: at })
      expect(await repo.markCompleted({ note_id: 'note_once', completed_at: at, duration_seconds: 61.5, credits_charged: 2, usage_id: 'use_1' })).toBe(true)
      expect(await repo.markCompleted({ note_id: 'note_once', completed_at: at, duration_seconds: 1, credits_charged: 9, usage_id: 'use_2' })).toBe(false)
      expect(await repo.byNote('note_once')).toMatchObject({ completed_at: at, duration_seconds: 61.5, credits_charged: 2, usage_id: 'use_1' })
    })

    test.if(b.name === 'postgres')('two nodes completing at once: the row read with lock by one is waited for by the other, which then sees it completed', async () => {
      const url = await freshPostgresUrl()
      const { store, repo } = await withNote('note_race', new PostgresStore(url, { max: 2 }))
      await repo.insert({ note_id: 'note_race', account_id: 'acct_1', sandbox: 0, storage_key: 'uploads/note_race', file_name: 'a.wav', content_type: 'audio/wav', declared_size: null, source: 'api_key', created_at: at })
      const other = new PostgresStore(url, { max: 2 })
      stores.push(other)
      const nodes = [store, other].map(s => ({ store: s, repo: createUploadsRepo(s) }))
      let charges = 0
      const winners = await Promise.all(nodes.map((n, i) => n.store.transaction(async () => {
        const row = (await n.repo.byNote('note_race', { lock: true }))!
        if (row.completed_at) return false
        charges++
        await Bun.sleep(50) // the charge, in the real service: the other node waits on the lock meanwhile
        return n.repo.markCompleted({ note_id: 'note_race', completed_at: at, duration_seconds: 1, credits_charged: 1, usage_id: `use_${i}` })
      })))
      expect(winners.filter(Boolean)).toHaveLength(1)
      expect(charges).toBe(1)
    })
  })
}
