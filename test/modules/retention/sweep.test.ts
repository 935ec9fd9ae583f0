/**
 * The retention sweep on both back ends (SQLite, a real PostgreSQL cluster) and both storages (disk,
 * a real S3 server, s3rver): notes of several ages and states, with and without a recording, in
 * accounts whose policies differ; one sweep; then exactly what remains (rows, files or objects, the
 * API's view, the audit log), and a second sweep that finds nothing more to do.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { backEnds } from '../../helpers/backends'
import { createTestApp, fixedClock } from '../../helpers/app'
import { startS3 } from '../../helpers/s3'
import type { Store } from '../../../src/db/store'

const DAY = 86_400_000
const T0 = '2026-01-10T09:00:00.000Z'
/** the sweep runs 41 days after the old notes were made: older than 30 days; the young ones are 1 day old */
const SWEEP_AT = new Date(Date.parse(T0) + 41 * DAY).toISOString()

/** What each account holds: [name, age, state, recording]. */
const NOTES = [
  ['old-done', 'old', 'done', true],
  ['old-failed', 'old', 'failed', true],
  ['old-processing', 'old', 'processing', true],
  ['old-queued', 'old', 'queued', true],
  ['old-text', 'old', 'done', false],
  ['young-done', 'young', 'done', true],
  ['young-failed', 'young', 'failed', true],
  ['young-text', 'young', 'done', false],
] as const

/** What the sweep leaves, per account's policy (expected values written out, not computed from the code). */
const EXPECTED = {
  // notes after 30 days: the old settled notes go whole (recording included); processing ones stay
  notes: { gone: ['old-done', 'old-failed', 'old-text'], mediaRemoved: [] as string[] },
  // media after 30 days: the old settled recordings go, their notes stay; notes without one are untouched
  media: { gone: [] as string[], mediaRemoved: ['old-done', 'old-failed'] },
  // no policy of its own and the instance default (forever): nothing goes
  default: { gone: [] as string[], mediaRemoved: [] as string[] },
} as const

const storages = ['disk', 's3'] as const

for (const b of backEnds) {
  for (const kind of storages) {
    describe.skipIf(b.skip)(`the retention sweep on ${b.name} with ${kind} storage`, () => {
      let store: Store
      let s3: Awaited<ReturnType<typeof startS3>> | null = null
      let t: ReturnType<typeof createTestApp>
      const clock = fixedClock(T0)
      /** account policy → note name → note id */
      const ids: Record<string, Record<string, string>> = {}
      const keys: Record<string, string> = {}

      const storageKey = async (noteId: string) => (await store.get<{ storage_key: string }>('SELECT storage_key FROM uploads WHERE note_id = ?', [noteId]))?.storage_key ?? null
      const stored = async (key: string) => (await t.services.storage.stat(key)) !== null
      const count = async (sql: string, params: (string | number)[] = []) => Number((await store.get<{ n: number | string }>(sql, params))!.n)

      async function makeNote(policy: string, name: string, state: string, recording: boolean): Promise<string> {
        const token = keys[policy]!
        let id: string
        if (recording) {
          const bytes = new TextEncoder().encode(`RIFF-fake-recording-of-${policy}-${name}`)
          const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: `${name}.wav`, contentType: 'audio/wav', fileSize: bytes.length } })
          expect(up.status).toBe(201)
          id = up.body.noteId
          // the client's PUT to the signed URL: the service itself on disk, the S3 server's presigned URL on S3
          const put = new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: bytes })
          const res = kind === 'disk' ? await t.app.handle(put) : await fetch(put)
          expect(res.status).toBeLessThan(300)
        } else {
          const created = await t.call('POST', '/v1/notes', { token, body: { title: `${policy} ${name}`, content: `text note zebracorn${policy}` } })
          expect(created.status).toBe(201)
          id = created.body.id
        }
        // the pipeline's end states, written as it writes them (transcript, status, stage)
        const [status, stage, code] = state === 'done' ? ['Done', null, null] : state === 'failed' ? ['Error', 'transcribing', 'transcription_failed'] : state === 'processing' ? ['Summarizing', 'transcribing', null] : ['Summarizing', 'queued', null]
        await store.run('UPDATE notes SET status = ?, processing_stage = ?, error_code = ? WHERE id = ?', [status, stage, code, id])
        if (recording && state === 'done') {
          await store.run('UPDATE note_bodies SET original_transcription = ? WHERE note_id = ?', [`the words of zebracorn${policy} ${name}`, id])
          await store.run("INSERT INTO note_speakers (note_id, label, name, said) VALUES (?, 'A', 'Ada', 'hello')", [id])
        }
        return id
      }

      beforeAll(async () => {
        store = await b.open()
        if (kind === 's3') s3 = await startS3()
        t = createTestApp({ store, clock, storage: s3?.storage() })
        for (const policy of Object.keys(EXPECTED)) {
          keys[policy] = await t.key({ email: `${policy}@example.com` })
          ids[policy] = {}
        }
        expect((await t.call('PATCH', '/v1/settings/retention', { token: keys.notes, body: { mode: 'notes', days: 30 } })).status).toBe(200)
        expect((await t.call('PATCH', '/v1/settings/retention', { token: keys.media, body: { mode: 'media', days: 30 } })).status).toBe(200)
        for (const age of ['old', 'young'] as const) {
          clock.set(age === 'old' ? T0 : new Date(Date.parse(SWEEP_AT) - DAY).toISOString())
          for (const policy of Object.keys(EXPECTED)) {
            for (const [name, a, state, recording] of NOTES) if (a === age) ids[policy]![name] = await makeNote(policy, name, state, recording)
          }
        }
        clock.set(SWEEP_AT)
      }, 60_000)

      afterAll(async () => {
        await store?.close()
        await s3?.close()
      })

      test('deletes what each policy says, keeps the rest, and a second sweep finds nothing more', async () => {
        const recordings = async () => {
          let n = 0
          for (const policy of Object.keys(ids)) for (const id of Object.values(ids[policy]!)) { const k = await storageKey(id); if (k && (await stored(k))) n++ }
          return n
        }
        const keysBefore: Record<string, string | null> = {}
        for (const policy of Object.keys(ids)) for (const [name, id] of Object.entries(ids[policy]!)) keysBefore[`${policy}/${name}`] = await storageKey(id)
        const before = { notes: await count('SELECT count(*) AS n FROM notes'), recordings: await recordings() }

        const first = await t.services.retention.sweep()

        const after = { notes: await count('SELECT count(*) AS n FROM notes'), recordings: await recordings() }
        console.log(`retention sweep on ${b.name}/${kind}: notes ${before.notes} → ${after.notes}, recordings ${before.recordings} → ${after.recordings}; ${JSON.stringify(first)}`)
        // 3 accounts × 8 notes; 3 notes of the `notes` account go; recordings: 18 stored, 2 go with
        // deleted notes, 2 removed by the `media` policy
        expect(before).toEqual({ notes: 24, recordings: 18 })
        expect(after).toEqual({ notes: 21, recordings: 14 })
        // the processing and queued notes of the two accounts with a policy are skipped, not swept;
        // recordings removed: the 4 files deleted, 2 with their notes (`notes`) and 2 alone (`media`)
        // (it said 2 before issue 29: the files of the deleted notes were not counted)
        expect(first).toEqual({ notesDeleted: 3, recordingsRemoved: 4, skippedProcessing: 4, failed: 0, auditEventsPruned: 0 })

        for (const [policy, expected] of Object.entries(EXPECTED)) {
          for (const [name, , , recording] of NOTES) {
            const id = ids[policy]![name]!
            const note = await t.call('GET', `/v1/notes/${id}`, { token: keys[policy] })
            const key = keysBefore[`${policy}/${name}`]
            const what = `${policy}/${name}`
            if ((expected.gone as readonly string[]).includes(name)) {
              expect(note.status, what).toBe(404)
              // nothing left behind: body, upload, speakers, jobs, and the stored recording
              for (const table of ['note_bodies', 'uploads', 'note_speakers', 'jobs']) expect(await count(`SELECT count(*) AS n FROM ${table} WHERE note_id = ?`, [id]), `${what} ${table}`).toBe(0)
              if (key) expect(await stored(key), `${what} recording`).toBe(false)
              continue
            }
            expect(note.status, what).toBe(200)
            if ((expected.mediaRemoved as readonly string[]).includes(name)) {
              expect(note.body.mediaRemovedAt, what).toBe(SWEEP_AT)
              expect(await stored(key!), `${what} recording`).toBe(false)
              // the transcript is kept
              if (name === 'old-done') expect(note.body.originalTranscription).toBe(`the words of zebracorn${policy} ${name}`)
            } else {
              expect(note.body.mediaRemovedAt, what).toBeUndefined()
              if (recording) expect(await stored(key!), `${what} recording`).toBe(true)
            }
          }
        }
        // search rows of deleted notes are gone too: the notes account's old text note no longer matches
        const found = await t.call('GET', '/v1/notes?q=zebracornnotes', { token: keys.notes })
        expect(found.body.data.map((n: { id: string }) => n.id).sort()).toEqual([ids.notes!['young-text']!, ids.notes!['young-done']!].sort())

        // the audit log: one event per note, by the policy, with mode and days
        const events = await store.all<{ action: string; actor_type: string; actor_id: string; target_id: string; details: string }>("SELECT action, actor_type, actor_id, target_id, details FROM audit_events WHERE action IN ('note.deleted', 'note.media_deleted') ORDER BY action, target_id")
        expect(events.map(e => [e.action, e.target_id]).sort()).toEqual([
          ['note.deleted', ids.notes!['old-done']!], ['note.deleted', ids.notes!['old-failed']!], ['note.deleted', ids.notes!['old-text']!],
          ['note.media_deleted', ids.media!['old-done']!], ['note.media_deleted', ids.media!['old-failed']!],
        ].sort())
        for (const e of events) {
          expect([e.actor_type, e.actor_id]).toEqual(['policy', 'retention'])
          expect(JSON.parse(e.details)).toMatchObject({ mode: e.action === 'note.deleted' ? 'notes' : 'media', days: 30 })
        }

        if (kind === 'disk') {
          // on disk, exactly the files of the recordings kept remain
          const files = readdirSync(join(t.config.dataDir, 'media'), { recursive: true, withFileTypes: true }).filter(f => f.isFile())
          expect(files.length).toBe(14)
          expect(existsSync(join(t.config.dataDir, 'media', keysBefore['default/old-done']!))).toBe(true)
        }

        const second = await t.services.retention.sweep()
        expect(second).toEqual({ notesDeleted: 0, recordingsRemoved: 0, skippedProcessing: 4, failed: 0, auditEventsPruned: 0 })
        expect(await count('SELECT count(*) AS n FROM notes')).toBe(21)
      }, 60_000)
    })
  }
}
