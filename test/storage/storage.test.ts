import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDiskStorage } from '../../src/storage/disk'
import type { MediaStorage } from '../../src/storage/storage'
import { startS3 } from '../helpers/s3'
import { createTestApp } from '../helpers/app'
import { recordingEngine } from '../helpers/engines'
import { makeWav } from '../fixtures/wav'

let s3: Awaited<ReturnType<typeof startS3>>
beforeAll(async () => { s3 = await startS3() })
afterAll(async () => { await s3.close() })

/** PUTs bytes to an upload target as a client would: disk targets through the app, S3 ones over HTTP. */
type Putter = (url: string, headers: Record<string, string>, bytes: Uint8Array) => Promise<number>

const backends: [string, () => { storage: MediaStorage; put: Putter }][] = [
  ['disk', () => {
    const storage = createDiskStorage({ root: mkdtempSync(join(tmpdir(), 'notesvc-disk-')), publicUrl: 'http://localhost', secret: 'test-secret' })
    // the disk target is served by the app; here the contract only needs the bytes stored under the key
    return { storage, put: async () => 0 }
  }],
  ['s3', () => ({
    storage: s3.storage(),
    put: async (url, headers, bytes) => (await fetch(url, { method: 'PUT', headers, body: bytes as unknown as BodyInit })).status,
  })],
]

describe.each(backends)('%s storage', (kind, make) => {
  test('stat, local copy and delete of a stored object; missing keys read as absent', async () => {
    const { storage, put } = make()
    const key = `uploads/note_${crypto.randomUUID()}`
    const bytes = makeWav({ seconds: 0.5 })
    if (storage.receiveUpload) await storage.receiveUpload(key, [bytes], 1_000_000)
    else {
      const target = await storage.uploadTarget(key, 'audio/wav', new Date(Date.now() + 60_000))
      expect(target.headers).toEqual({ 'Content-Type': 'audio/wav' })
      expect(await put(target.url, target.headers, bytes)).toBe(200)
    }
    expect(await storage.stat(key)).toEqual({ size: bytes.length })
    const copy = await storage.localCopy(key)
    expect(Buffer.from(await Bun.file(copy.path).arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
    await copy.release()
    // read back for playing: whole, and a byte range (what the player's Range requests ask for)
    expect(Buffer.from(await new Response(await storage.read(key)).arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
    expect(Buffer.from(await new Response(await storage.read(key, { start: 8, end: 11 })).arrayBuffer()).toString('latin1')).toBe('WAVE')
    await storage.delete(key)
    expect(await storage.stat(key)).toBeNull()
    expect(await storage.stat('uploads/never-written')).toBeNull()
    await storage.delete('uploads/never-written')
  })

  test('put: bytes and a file on this machine stored whole under a key, replacing what was there (a live stream\'s parts and its recording)', async () => {
    const { storage } = make()
    const key = `live/live_${crypto.randomUUID()}/0/000001.pcm`
    const part = crypto.getRandomValues(new Uint8Array(32_000))
    await storage.put(key, part)
    expect(new Uint8Array(await new Response(await storage.read(key)).arrayBuffer())).toEqual(part)
    // a file: 3 MB of a WAV, read back byte for byte (the S3 upload once stored a stream's framing instead)
    const wav = makeWav({ seconds: 90 })
    const path = join(mkdtempSync(join(tmpdir(), 'notesvc-put-')), 'recording.wav')
    await Bun.write(path, wav)
    await storage.put(key, { path })
    expect(await storage.stat(key)).toEqual({ size: wav.length })
    expect(Buffer.from(await new Response(await storage.read(key)).arrayBuffer()).equals(Buffer.from(wav))).toBe(true)
    await storage.delete(key)
  })
})

test('an S3 upload URL lives as long as the caller\'s clock says (expiresAt - now), not counted from this machine\'s clock', async () => {
  const storage = s3.storage()
  // a service clock a year behind this machine's, as a test's fixed clock is: the URL still lives an hour
  const now = new Date(Date.now() - 365 * 86_400_000)
  const target = await storage.uploadTarget(`uploads/note_${crypto.randomUUID()}`, 'audio/wav', new Date(now.getTime() + 3_600_000), now)
  expect(new URL(target.url).searchParams.get('X-Amz-Expires')).toBe('3600')
})

describe('disk storage writes', () => {
  test('over the limit: refused, and neither the file nor a temporary part is left', async () => {
    const root = mkdtempSync(join(tmpdir(), 'notesvc-disk-'))
    const storage = createDiskStorage({ root, publicUrl: 'http://localhost', secret: 's' })
    await expect(storage.receiveUpload('uploads/x', [new Uint8Array(600), new Uint8Array(600)], 1000)).rejects.toThrow('larger than 1000 bytes')
    expect(await storage.stat('uploads/x')).toBeNull()
    expect([...new Bun.Glob('**/*').scanSync({ cwd: root, dot: true })]).toEqual([])
  })

  test('keys cannot escape the media folder', () => {
    const storage = createDiskStorage({ root: mkdtempSync(join(tmpdir(), 'notesvc-disk-')), publicUrl: 'http://localhost', secret: 's' })
    expect(() => storage.pathOf('../../etc/passwd')).toThrow('escapes')
  })
})

describe('upload → presigned PUT → complete → Done on S3', () => {
  test('the same lifecycle as on disk, with the client PUTting straight to the bucket', async () => {
    const rec = recordingEngine()
    const t = createTestApp({ storage: s3.storage(), engines: { asr: () => rec.engine }, env: { NOTESVC_ASR_SLOTS: '2' } })
    await t.services.workers.start()
    try {
      const token = await t.key()
      const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'call.wav', contentType: 'audio/wav', styleId: 'transcript' } })).body
      expect(up.uploadUrl).toStartWith(`${s3.endpoint}/${s3.bucket}/uploads/${up.noteId}?`)
      expect(up.uploadUrl).toContain('X-Amz-Signature=')
      expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(409)
      const wav = makeWav({ seconds: 125, sampleRate: 8000 })
      const res = await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })
      expect(res.status).toBe(200)
      const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
      expect(done.status).toBe(202)
      expect(done.body).toMatchObject({ creditsCharged: 3, durationSeconds: 125 })
      const deadline = Date.now() + 15_000
      let status: any
      do {
        await Bun.sleep(20)
        status = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
      } while (status.status === 'Summarizing' && Date.now() < deadline)
      expect(status.status).toBe('Done')
      const note = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
      // 125 s on 2 slots: planned as 4 chunks of about 31 s (two rounds; cut at quiet points), one
      // segment each, in order from 0
      const starts = note.structuredContent.transcript.segments.map((s: any) => s.start)
      expect(starts).toHaveLength(4)
      expect(starts[0]).toBe(0)
      expect(starts[1]).toBeGreaterThan(25)
      for (let i = 1; i < starts.length; i++) expect(starts[i]).toBeGreaterThan(starts[i - 1])
      expect(rec.calls.reduce((n, c) => n + c.samples, 0)).toBe(125 * 16_000)
      expect((await t.call('DELETE', `/v1/notes/${up.noteId}`, { token })).status).toBe(204)
      expect(await t.services.storage.stat(`uploads/${up.noteId}`)).toBeNull()
    } finally {
      await t.services.workers.stop()
    }
  })
})
