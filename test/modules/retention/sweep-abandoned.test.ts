/**
 * Uploads that were started and never completed (the file PUT but POST …/complete never called or
 * refused, e.g. 402; or not even the file) stay at status Summarizing, stage awaiting_upload, with no
 * job: the "failed recordings escape the sweep" class. Once old enough they are swept like failed
 * notes (policy `notes`: the note, its upload row and stored file go; `media`: the file goes, the note
 * is marked), while a note with its job queued is still left. On both back ends and both storages (disk,
 * a real S3 server), real uploads.
 *
 * (The upload URL's lifetime, one hour, is always shorter than the shortest policy, one day, so no
 * test here can tell the two conditions apart; the sweep requires both.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { startS3 } from '../../helpers/s3'
import type { Store } from '../../../src/db/store'

const DAY = 86_400_000
const T0 = '2026-01-10T09:00:00.000Z'
/** 41 days later: the notes made at T0 are older than the 30 days of both policies */
const SWEEP_AT = new Date(Date.parse(T0) + 41 * DAY).toISOString()

for (const b of backEnds) for (const kind of ['disk', 's3'] as const) describe.skipIf(b.skip)(`uploads never completed, on ${b.name} with ${kind} storage`, () => {
  let store: Store
  let s3: Awaited<ReturnType<typeof startS3>> | null = null
  let t: ReturnType<typeof createTestApp>
  const clock = fixedClock(T0)
  const tokens: Record<string, string> = {}
  /** policy → what → note id */
  const ids: Record<string, Record<string, string>> = {}
  /** whether the upload's object is stored (a file on disk, an object in the bucket) */
  const stored = async (id: string) => (await t.services.storage.stat(`uploads/${id}`)) !== null
  const count = async (sql: string, params: string[]) => Number((await store.get<{ n: number | string }>(sql, params))!.n)

  beforeAll(async () => {
    store = await b.open()
    if (kind === 's3') s3 = await startS3()
    // a speech engine, so completing an upload gets as far as looking for its file
    t = createTestApp({ store, clock, storage: s3?.storage(), engines: { asr: () => recordingEngine().engine } })
    for (const mode of ['notes', 'media']) {
      const token = tokens[mode] = await t.key({ email: `${mode}@example.com` })
      expect((await t.call('PATCH', '/v1/settings/retention', { token, body: { mode, days: 30 } })).status).toBe(200)
      const start = async () => {
        const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'talk.wav', contentType: 'audio/wav', fileSize: 16 } })
        expect(up.status).toBe(201)
        return up.body
      }
      // the client's PUT to the signed URL: the service itself on disk, the S3 server's presigned URL on S3
      const put = async (up: { uploadUrl: string; headers: Record<string, string> }) => {
        const request = new Request(up.uploadUrl, { method: 'PUT', headers: up.headers, body: new TextEncoder().encode('RIFF-sixteen-byt') })
        expect((kind === 'disk' ? await t.app.handle(request) : await fetch(request)).status).toBeLessThan(300)
      }
      // the file arrived, the upload was never completed
      const withFile = await start()
      await put(withFile)
      // not even the file
      const empty = await start()
      // completed and queued: its job is waiting (written as completeUpload leaves it)
      const queued = await start()
      await put(queued)
      await store.run("UPDATE notes SET processing_stage = 'queued' WHERE id = ?", [queued.noteId])
      ids[mode] = { withFile: withFile.noteId, empty: empty.noteId, queued: queued.noteId }
    }
    clock.set(SWEEP_AT)
  }, 60_000)

  afterAll(async () => {
    await store?.close()
    await s3?.close()
  })

  test('swept once older than the policy: notes deleted or marked, files gone; the queued note left', async () => {
    const before = { notes: ids.notes!, media: ids.media! }
    for (const mode of ['notes', 'media']) {
      expect((await t.call('GET', `/v1/notes/${ids[mode]!.withFile}/status`, { token: tokens[mode] })).body.processingStage).toBe('awaiting_upload')
      expect(await stored(ids[mode]!.withFile!)).toBe(true)
    }

    const first = await t.services.retention.sweep()
    // before the fix: { notesDeleted: 0, recordingsRemoved: 0, skippedProcessing: 6 }, every run;
    // recordings removed: the two files (one with its note, one alone), not the uploads that had none
    expect(first).toEqual({ notesDeleted: 2, recordingsRemoved: 2, skippedProcessing: 2, failed: 0, auditEventsPruned: 0 })

    // policy notes: both abandoned uploads gone, as the user's delete leaves them
    for (const what of ['withFile', 'empty']) {
      const id = before.notes[what]!
      expect((await t.call('GET', `/v1/notes/${id}`, { token: tokens.notes })).status).toBe(404)
      expect(await count('SELECT count(*) AS n FROM uploads WHERE note_id = ?', [id])).toBe(0)
      expect(await stored(id)).toBe(false)
    }
    // policy media: the notes stay, their (possible) recording gone and said so
    for (const what of ['withFile', 'empty']) {
      const id = before.media[what]!
      const note = await t.call('GET', `/v1/notes/${id}`, { token: tokens.media })
      expect(note.status).toBe(200)
      expect(note.body.mediaRemovedAt).toBe(SWEEP_AT)
      expect(await stored(id)).toBe(false)
    }
    // the queued ones: untouched in both
    for (const mode of ['notes', 'media']) {
      const note = await t.call('GET', `/v1/notes/${before[mode as 'notes'].queued}`, { token: tokens[mode] })
      expect(note.status).toBe(200)
      expect(note.body.mediaRemovedAt).toBeUndefined()
      expect(await stored(before[mode as 'notes'].queued!)).toBe(true)
    }
    // the audit log says which were abandoned uploads
    const events = await store.all<{ action: string; target_id: string; details: string }>("SELECT action, target_id, details FROM audit_events WHERE action IN ('note.deleted', 'note.media_deleted')")
    expect(events.map(e => [e.action, e.target_id, JSON.parse(e.details).abandonedUpload]).sort()).toEqual([
      ['note.deleted', before.notes.withFile, true], ['note.deleted', before.notes.empty, true],
      ['note.media_deleted', before.media.withFile, true], ['note.media_deleted', before.media.empty, true],
    ].sort())

    // completing it now (say, credits topped up after a 402) is refused with what happened and what to do
    const late = await t.call('POST', `/v1/uploads/${before.media.withFile}/complete`, { token: tokens.media })
    expectEnvelope(late, 409, 'conflict')
    expect(late.body.error.message).toContain(`the retention policy removed it on ${SWEEP_AT.slice(0, 10)}; start a new upload with POST /v1/uploads`)

    // nothing more to do
    expect(await t.services.retention.sweep()).toEqual({ notesDeleted: 0, recordingsRemoved: 0, skippedProcessing: 2, failed: 0, auditEventsPruned: 0 })
  }, 60_000)
})
