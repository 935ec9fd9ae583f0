import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'

/**
 * The speakers of a note through the API, on both back ends: the pipeline's writes (saveTranscript
 * with labelled segments and speakers, then finish with a summary that names "Speaker A") are made
 * through the notes service as the pipeline makes them; everything after is what a client does.
 * The engines themselves are tested in test/engines/diarization and end to end in test/system.
 */
const opened = closedAfterAll()

const SEGMENTS: TranscriptSegment[] = [
  { start: 0, end: 2.5, text: 'good morning everyone the budget is ready', speaker: 'A' },
  { start: 3, end: 5, text: 'thanks I will order the servers on friday', speaker: 'B' },
  { start: 5.5, end: 8, text: 'great the budget covers two servers', speaker: 'A' },
  { start: 8.5, end: 9.5, text: 'agreed', speaker: 'C' },
]
const PRINT = (x: number) => Array.from({ length: 8 }, (_, i) => (i === x ? 1 : 0))

for (const b of backEnds) describe.skipIf(b.skip)(`a note's speakers on ${b.name}`, () => {
  async function diarizedNote() {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off' } })
    const token = await t.key({ plan: 'pro' })
    const id = await recordedNote(t, token, SEGMENTS)
    return { t, token, id }
  }

  /** A recording of `segments` in `token`'s library, transcribed and finished as the pipeline does; its note's id. */
  async function recordedNote(t: ReturnType<typeof createTestApp>, token: string, segments: TranscriptSegment[]) {
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav', speakers: { min: 2, max: 4 } } })
    expect(up.status).toBe(201)
    const id = up.body.noteId as string
    const labels = [...new Set(segments.map(s => s.speaker!))]
    await t.services.notes.saveTranscript(id, {
      transcript: segments.map(s => s.text).join(' '), language: 'en', segments,
      speakers: labels.map((label, i) => ({ label, name: null, engine: 'builtin', embedding: PRINT(i), profileId: null })),
    })
    await t.services.notes.finish(id, {
      title: 'Budget with Speaker A', summary: 'Speaker A says the budget is ready; Speaker B orders the servers.', language: 'en', segments,
      structuredContent: { 'meeting-notes': { attendees: ['Speaker A', 'Speaker B', 'Speaker C'], actionItems: [{ task: 'order the servers', owner: 'Speaker B', due: 'Friday' }] } },
    })
    return id
  }

  test('listed in order of first speech, unnamed ones shown as "Speaker A"; the hint was kept with the upload', async () => {
    const { t, token, id } = await diarizedNote()
    const r = await t.call('GET', `/v1/notes/${id}/speakers`, { token })
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual([
      { id: 'A', name: null, displayName: 'Speaker A', segments: 2, seconds: 5, profileId: null },
      { id: 'B', name: null, displayName: 'Speaker B', segments: 1, seconds: 2, profileId: null },
      { id: 'C', name: null, displayName: 'Speaker C', segments: 1, seconds: 1, profileId: null },
    ])
    const hint = await t.store.get<{ speakers_hint: string }>('SELECT speakers_hint FROM uploads WHERE note_id = ?', [id])
    expect(JSON.parse(hint!.speakers_hint)).toEqual({ min: 2, max: 4 })
  })

  test('a name given once shows in SRT, VTT, txt, verbose_json, the summary, the attendees and owners, and search by speaker', async () => {
    const { t, token, id } = await diarizedNote()
    const named = await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } })
    expect(named.status).toBe(200)
    expect(named.body).toMatchObject({ id: 'B', name: 'Tom', displayName: 'Tom' })
    expect(named.body.profileId).toStartWith('spk_')

    const srt = (await t.call('GET', `/v1/notes/${id}/transcript?format=srt`, { token })).text
    expect(srt).toContain('Tom: thanks I will order')
    expect(srt).toContain('Speaker A: good morning')
    expect((await t.call('GET', `/v1/notes/${id}/transcript?format=vtt`, { token })).text).toContain('<v Tom>thanks I will order')
    expect((await t.call('GET', `/v1/notes/${id}/transcript?format=txt`, { token })).text).toStartWith('Speaker A: good morning everyone the budget is ready\nTom: thanks')
    const verbose = (await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })).body
    expect(verbose.segments.map((s: { speaker: string; speakerId: string }) => [s.speakerId, s.speaker])).toEqual([['A', 'Speaker A'], ['B', 'Tom'], ['A', 'Speaker A'], ['C', 'Speaker C']])
    expect((await t.call('GET', `/v1/notes/${id}/transcript`, { token })).body.speakers).toEqual([{ id: 'A', name: 'Speaker A' }, { id: 'B', name: 'Tom' }, { id: 'C', name: 'Speaker C' }])

    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect(note.summary).toBe('Speaker A says the budget is ready; Tom orders the servers.')
    expect(note.structuredContent['meeting-notes']).toEqual({ attendees: ['Speaker A', 'Tom', 'Speaker C'], actionItems: [{ task: 'order the servers', owner: 'Tom', due: 'Friday' }] })

    const search = async (q: string, speaker: string) => (await t.call('GET', `/v1/notes?q=${encodeURIComponent(q)}&speaker=${encodeURIComponent(speaker)}`, { token })).body.data.map((n: { id: string }) => n.id)
    expect(await search('servers friday', 'Tom')).toEqual([id])
    expect(await search('servers friday', 'tom')).toEqual([id])
    // Tom never said "budget"; Speaker A did
    expect(await search('budget', 'Tom')).toEqual([])
    expect(await search('budget', 'Speaker A')).toEqual([id])
    expect(await search('serv', 'Speaker A')).toEqual([id])
    const alone = await t.call('GET', '/v1/notes?speaker=Tom', { token })
    expect(alone.status).toBe(400)
    expect(alone.body.error.details).toEqual([{ field: 'speaker', issue: 'sent without q' }])
  })

  // Fails if the speaker's condition forgot its note (`sp.note_id = …`): any note with the words
  // would come back when some other note's speaker of that name said them, even another account's.
  test('search by speaker: a note where someone else said the words is not returned, nor one whose words another library\'s speaker of that name said', async () => {
    const { t, token, id } = await diarizedNote()
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } })).status).toBe(200)
    // the same words in a second note of this library, said there by Speaker A; nobody there is Tom
    const second = await recordedNote(t, token, [
      { start: 0, end: 3, text: 'I ordered the servers on friday and the budget is ready', speaker: 'A' },
      { start: 3.5, end: 5, text: 'good thanks', speaker: 'B' },
    ])
    // another account's Tom says "budget", which in this library only Speaker A said
    const other = await t.key({ email: 'other@example.com', plan: 'pro' })
    const elsewhere = await recordedNote(t, other, [
      { start: 0, end: 2, text: 'hello everyone', speaker: 'A' },
      { start: 2.5, end: 5, text: 'the budget covers the servers', speaker: 'B' },
    ])
    expect((await t.call('PATCH', `/v1/notes/${elsewhere}/speakers/B`, { token: other, body: { name: 'Tom' } })).status).toBe(200)

    const search = async (key: string, q: string, speaker: string) => (await t.call('GET', `/v1/notes?q=${encodeURIComponent(q)}&speaker=${encodeURIComponent(speaker)}`, { token: key })).body.data.map((n: { id: string }) => n.id).sort()
    // both notes have the words; only the first has a Tom who said them
    expect((await t.call('GET', '/v1/notes?q=servers%20friday', { token })).body.data.map((n: { id: string }) => n.id).sort()).toEqual([id, second].sort())
    expect(await search(token, 'servers friday', 'Tom')).toEqual([id])
    expect(await search(token, 'servers friday', 'Speaker A')).toEqual([second])
    expect(await search(token, 'budget', 'Tom')).toEqual([])
    expect(await search(other, 'budget', 'Tom')).toEqual([elsewhere])
    expect(await search(other, 'servers friday', 'Tom')).toEqual([])
  })

  test('merged: every segment of C becomes A\'s, C is gone, and the summary says A', async () => {
    const { t, token, id } = await diarizedNote()
    await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' } })
    const merged = await t.call('PATCH', `/v1/notes/${id}/speakers/C`, { token, body: { mergeInto: 'A' } })
    expect(merged.status).toBe(200)
    expect(merged.body).toMatchObject({ id: 'A', name: 'Maria', segments: 3 })
    expect((await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data.map((s: { id: string }) => s.id)).toEqual(['A', 'B'])
    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect(note.structuredContent['meeting-notes'].attendees).toEqual(['Maria', 'Speaker B', 'Maria'])
    expect(await t.call('GET', `/v1/notes?q=agreed&speaker=Maria`, { token }).then(r => r.body.data.length)).toBe(1)
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { mergeInto: 'A' } })).status).toBe(400)
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/C`, { token, body: { name: 'x' } })).status).toBe(404)
  })

  test('one segment given to another speaker moves its words in search too', async () => {
    const { t, token, id } = await diarizedNote()
    const r = await t.call('PATCH', `/v1/notes/${id}/segments/3`, { token, body: { speaker: 'B' } })
    expect(r.status).toBe(200)
    expect(r.body.data.find((s: { id: string }) => s.id === 'B').segments).toBe(2)
    expect(await t.call('GET', `/v1/notes?q=agreed&speaker=Speaker%20B`, { token }).then(x => x.body.data.length)).toBe(1)
    expect(await t.call('GET', `/v1/notes?q=agreed&speaker=Speaker%20C`, { token }).then(x => x.body.data.length)).toBe(0)
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/4`, { token, body: { speaker: 'B' } })).status).toBe(404)
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/0`, { token, body: { speaker: 'Z' } })).status).toBe(400)
  })

  test('a named voice is remembered, listed, and can be forgotten; other libraries see none of it', async () => {
    const { t, token, id } = await diarizedNote()
    await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' } })
    await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom', remember: false } })
    const profiles = (await t.call('GET', '/v1/speakers', { token })).body.data
    expect(profiles.map((p: { name: string; engine: string }) => [p.name, p.engine])).toEqual([['Maria', 'builtin']])
    const other = await t.key({ email: 'other@example.com' })
    expect((await t.call('GET', '/v1/speakers', { token: other })).body.data).toEqual([])
    expect((await t.call('GET', `/v1/notes/${id}/speakers`, { token: other })).status).toBe(404)
    expect((await t.call('DELETE', `/v1/speakers/${profiles[0].id}`, { token: other })).status).toBe(404)
    expect((await t.call('DELETE', `/v1/speakers/${profiles[0].id}`, { token })).status).toBe(204)
    expect((await t.call('GET', '/v1/speakers', { token })).body.data).toEqual([])
    // the note keeps the name
    expect((await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data[0]).toMatchObject({ name: 'Maria', profileId: null })
  })

  test('a note created from text has no speakers; a still-processing note answers 409', async () => {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store })
    const token = await t.key()
    const note = await t.call('POST', '/v1/notes', { token, body: { title: 't', content: 'typed' } })
    expect((await t.call('GET', `/v1/notes/${note.body.id}/speakers`, { token })).body).toEqual({ data: [] })
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'a.wav', contentType: 'audio/wav' } })
    expect((await t.call('GET', `/v1/notes/${up.body.noteId}/speakers`, { token })).status).toBe(409)
    expect((await t.call('POST', '/v1/uploads', { token, body: { fileName: 'a.wav', contentType: 'audio/wav', speakers: { min: 4, max: 2 } } })).status).toBe(400)
    expect((await t.call('POST', '/v1/uploads', { token, body: { fileName: 'a.wav', contentType: 'audio/wav', speakers: 0 } })).status).toBe(400)
  })
})
