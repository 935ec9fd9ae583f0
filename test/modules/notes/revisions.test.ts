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
