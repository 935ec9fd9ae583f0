import { afterAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createClient, InvalidTokenError, NoteFailedError, NotFoundError, type NoteStatus, type UploadRecordingOptions } from '@notesvc/client'
import { createTestApp } from '../helpers/app'
import { freePort, tempDir } from '../helpers/process'
import { makeWav } from '../fixtures/wav'

/**
 * uploadRecording with a sandbox key against a complete app on loopback (its public URL is the
 * server's, so the signed PUT reaches it): createUpload, the PUT, completeUpload and the status until
 * Done, from a path, a Blob and a stream.
 */
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t = createTestApp({ env: { NOTESVC_PUBLIC_URL: base, NOTESVC_RATE_LIMITS: 'read=10000,write=10000,processing=10000' } })
const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
const dir = tempDir('notesvc-client-upload-')
afterAll(() => {
  server.stop(true)
  dir.remove()
})

const wav = new Uint8Array(makeWav({ seconds: 3 }))
const path = join(dir.path, 'standup.wav')
writeFileSync(path, wav)

function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

const FILES: [string, () => UploadRecordingOptions['file'], number | undefined][] = [
  ['a path', () => path, undefined],
  ['a Blob', () => new Blob([wav], { type: 'audio/wav' }), undefined],
  ['a stream', () => chunked(wav, 16_384), wav.length],
]

describe('uploadRecording with a sandbox key', () => {
  for (const [what, file, fileSize] of FILES) {
    test(`from ${what}: progress reaches the file's size and the Done note comes back`, async () => {
      const client = createClient({ baseUrl: base, apiKey: await t.key({ email: `upload-${what.replace(' ', '-')}@example.com`, sandbox: true }) })
      const progress: [number, number | null][] = []
      const statuses: NoteStatus['status'][] = []
      const note = await client.uploadRecording({
        file: file(), fileName: 'standup.wav', fileSize, pollMs: 10,
        onUploadProgress: (sent, total) => progress.push([sent, total]),
        onStatus: s => statuses.push(s.status),
      })
      expect(progress.at(-1)).toEqual([wav.length, wav.length])
      expect(progress.every(([sent], i) => i === 0 || sent > progress[i - 1]![0])).toBe(true)
      expect(statuses.at(-1)).toBe('Done')
      expect(note.status).toBe('Done')
      expect(note.originalTranscription).toMatch(/\S/)
      expect((await client.getNote({ id: note.id })).id).toBe(note.id)
      expect((await client.listNotes()).data.map(n => n.id)).toEqual([note.id])
    }, 30_000)
  }

  test('a path that does not exist fails before anything is created', async () => {
    const client = createClient({ baseUrl: base, apiKey: await t.key({ email: 'upload-missing@example.com', sandbox: true }) })
    const error = await client.uploadRecording({ file: join(dir.path, 'nothing.wav'), fileName: 'nothing.wav' }).catch(e => e)
    expect(error.message).toContain('No file at')
    expect((await client.listNotes()).data).toEqual([])
  })

  test('a PUT the server refuses (a signature altered on the way) is thrown as the class of its envelope', async () => {
    const client = createClient({
      baseUrl: base,
      apiKey: await t.key({ email: 'upload-refused@example.com', sandbox: true }),
      fetch: request => {
        if (request.method !== 'PUT') return fetch(request)
        const url = new URL(request.url)
        url.searchParams.set('signature', 'altered')
        return fetch(new Request(url, request))
      },
    })
    const error = await client.uploadRecording({ file: new Blob([wav], { type: 'audio/wav' }), fileName: 'standup.wav' }).catch(e => e)
    expect(error).toBeInstanceOf(InvalidTokenError)
    expect(error.status).toBe(401)
    expect(error.message).toContain('upload URL is not valid')
    expect(error.requestId).toMatch(/\S/)
  })

  test('an API error of a step is thrown as its class', async () => {
    const client = createClient({ baseUrl: base, apiKey: 'svc_test_unknown' })
    const error = await client.uploadRecording({ file: path, fileName: 'standup.wav' }).catch(e => e)
    expect(error.code).toBe('invalid_token')
    expect(error).not.toBeInstanceOf(NotFoundError)
  })
})

describe('uploadRecording with a live key', () => {
  test('a note that ends in Error throws NoteFailedError with its errorCode (whisper forced, its model missing)', async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const live = createTestApp({ env: { NOTESVC_PUBLIC_URL: base, NOTESVC_ASR: 'whisper', NOTESVC_WHISPER_MODEL: 'tiny.en' } })
    const own = Bun.serve({ port, hostname: '127.0.0.1', fetch: r => live.app.handle(r) })
    await live.services.workers.start()
    try {
      const client = createClient({ baseUrl: base, apiKey: await live.key() })
      const statuses: NoteStatus['status'][] = []
      const error = await client.uploadRecording({ file: path, fileName: 'standup.wav', pollMs: 20, onStatus: s => statuses.push(s.status) }).catch(e => e)
      expect(error).toBeInstanceOf(NoteFailedError)
      expect(error.errorCode).toBe('engine_unavailable')
      expect(error.message).toContain(error.noteId)
      expect(statuses.at(-1)).toBe('Error')
      expect((await client.getNoteStatus({ id: error.noteId })).status).toBe('Error')
    } finally {
      await live.services.workers.stop()
      own.stop(true)
    }
  }, 30_000)
})
