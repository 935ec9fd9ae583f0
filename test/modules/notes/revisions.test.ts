/**
 * Every transcript edit is a revision, not only a segment's words (segment-text.test.ts): a speaker
 * named, merged, given a segment; each honours If-Match. Both back ends; a diarized transcript saved
 * as the pipeline saves it (no engine needed).
 */
import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'

const opened = closedAfterAll()

const SEGMENTS = [
  { start: 0, end: 2, text: 'the budget is ready', speaker: 'A' },
  { start: 2, end: 4, text: 'order the servers', speaker: 'B' },
  { start: 4, end: 5, text: 'agreed', speaker: 'C' },
]

for (const b of backEnds) describe.skipIf(b.skip)(`revisions of a diarized transcript on ${b.name}`, () => {
  test('naming, merging and reassigning each make a revision with its operation; a stale If-Match is 412 and changes nothing; a restore brings the speakers back', async () => {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off' } })
    const token = await t.key({ plan: 'pro' })
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.saveTranscript(id, { transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS, speakers: ['A', 'B', 'C'].map(label => ({ label, name: null, engine: null, embedding: null, profileId: null })) })
    await t.services.notes.finish(id, { title: 'Budget', summary: 'The budget.', language: 'en', segments: SEGMENTS, structuredContent: null })
    const speakers = async () => (await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data.map((s: { displayName: string }) => s.displayName)

    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' }, headers: { 'if-match': '"0"' } })).status).toBe(200)
    const stale = await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' }, headers: { 'if-match': '"0"' } })
    expect([stale.status, stale.body.error.code, stale.headers.get('etag')]).toEqual([412, 'precondition_failed', '"1"'])
    expect(await speakers()).toEqual(['Maria', 'Speaker B', 'Speaker C'])
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/C`, { token, body: { mergeInto: 'B' } })).status).toBe(200)
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/1`, { token, body: { speaker: 'A' } })).status).toBe(200)
    expect(await speakers()).toEqual(['Maria', 'Speaker B'])

    const list = (await t.call('GET', `/v1/notes/${id}/revisions`, { token })).body.data
    expect(list.map((r: { version: number; operation: string }) => [r.version, r.operation])).toEqual([[3, 'updateNoteSegment'], [2, 'updateNoteSpeaker'], [1, 'updateNoteSpeaker'], [0, 'transcribed']])
    expect((await t.call('GET', `/v1/notes/${id}/revisions/1`, { token })).body.speakers).toEqual([{ id: 'A', name: 'Maria' }, { id: 'B', name: 'Speaker B' }, { id: 'C', name: 'Speaker C' }])

    expect((await t.call('POST', `/v1/notes/${id}/revisions/0/restore`, { token, headers: { 'if-match': '"2"' } })).status).toBe(412)
    expect((await t.call('POST', `/v1/notes/${id}/revisions/0/restore`, { token })).body).toEqual({ version: 4, restoredFrom: 0 })
    expect(await speakers()).toEqual(['Speaker A', 'Speaker B', 'Speaker C'])
    // the list says which version a restore brought back (the browser's undo and redo read it)
    const restored = (await t.call('GET', `/v1/notes/${id}/revisions`, { token })).body.data
    expect(restored.map((r: { version: number; restoredFrom: number | null }) => [r.version, r.restoredFrom])).toEqual([[4, 0], [3, null], [2, null], [1, null], [0, null]])
    const segs = (await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })).body.segments
    expect(segs.map((s: { speakerId: string }) => s.speakerId)).toEqual(['A', 'B', 'C'])
  }, 30_000)
})

/** Twenty timed segments (an edit of one is a small change of the whole, kept as a change). */
const LONG = Array.from({ length: 20 }, (_, i) => ({ start: i * 2, end: i * 2 + 2, text: `segment ${i} as heard`, speaker: i % 2 ? 'B' : 'A' }))

for (const b of backEnds) describe.skipIf(b.skip)(`revisions kept as changes on ${b.name}`, () => {
  test('75 edits: any revision reads as the transcript was then, a restore 30 edits back crosses a snapshot; only every 50th revision keeps the transcript whole', async () => {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    const token = await t.key({ plan: 'pro' })
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.saveTranscript(id, { transcript: LONG.map(s => s.text).join(' '), language: 'en', segments: LONG, speakers: ['A', 'B'].map(label => ({ label, name: null, engine: null, embedding: null, profileId: null })) })
    await t.services.notes.finish(id, { title: 'Long', summary: 'Long.', language: 'en', segments: LONG, structuredContent: null })
    const now = async () => {
      const r = await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })
      return { text: r.body.transcript, segments: r.body.segments, version: r.headers.get('etag') }
    }
    const seen = [await now()]
    for (let v = 1; v <= 75; v++) {
      // every segment corrected in turn; a speaker named and a segment given to the other speaker now and then
      const edit = v % 10 === 0 ? t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: `Tom ${v}` } })
        : v % 7 === 0 ? t.call('PATCH', `/v1/notes/${id}/segments/${v % 20}`, { token, body: { speaker: v % 2 ? 'A' : 'B' } })
          : t.call('PATCH', `/v1/notes/${id}/segments/${v % 20}`, { token, body: { text: `word ${v} corrected here` } })
      expect((await edit).status).toBe(200)
      seen.push(await now())
    }
    expect(seen[75]!.version).toBe('"75"')
    // what a revision answers is the transcript as it was at that version, whichever snapshot it is rebuilt from
    for (const v of [0, 1, 30, 45, 49, 50, 51, 74]) {
      const r = (await t.call('GET', `/v1/notes/${id}/revisions/${v}`, { token })).body
      expect([r.version, r.transcript, r.segments.map((s: { text: string; speaker: string }) => [s.text, s.speaker])]).toEqual([v, seen[v]!.text, seen[v]!.segments.map((s: { text: string; speakerId: string }) => [s.text, s.speakerId])])
    }
    expect((await t.call('GET', `/v1/notes/${id}/revisions/40`, { token })).body.speakers).toEqual([{ id: 'A', name: 'Speaker A' }, { id: 'B', name: 'Tom 40' }])
    // the premise: the whole transcript kept at versions 0 and 50 only, every other revision what it changed
    const whole = await store.all<{ version: number | string }>('SELECT version FROM transcript_revisions WHERE note_id = ? AND transcript IS NOT NULL ORDER BY version', [id])
    expect(whole.map(r => Number(r.version))).toEqual([0, 50])

    expect((await t.call('POST', `/v1/notes/${id}/revisions/45/restore`, { token, headers: { 'if-match': '"75"' } })).body).toEqual({ version: 76, restoredFrom: 45 })
    const restored = await now()
    expect([restored.text, restored.segments]).toEqual([seen[45]!.text, seen[45]!.segments])
    const speakers = (await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data.map((s: { displayName: string }) => s.displayName)
    expect(speakers).toEqual(['Speaker A', 'Tom 40'])
    // and the restore itself is a revision that reads back as what it restored
    expect((await t.call('GET', `/v1/notes/${id}/revisions/76`, { token })).body.transcript).toBe(seen[45]!.text)
  }, 60_000)
})
