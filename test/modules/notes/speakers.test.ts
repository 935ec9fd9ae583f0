import { describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope } from '../../helpers/app'
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
      { id: 'A', name: null, displayName: 'Speaker A', segments: 2, seconds: 5, profileId: null, suggestion: null },
      { id: 'B', name: null, displayName: 'Speaker B', segments: 1, seconds: 2, profileId: null, suggestion: null },
      { id: 'C', name: null, displayName: 'Speaker C', segments: 1, seconds: 1, profileId: null, suggestion: null },
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
    expect((await t.call('GET', `/v1/notes/${id}/transcript`, { token })).body.speakers).toEqual([{ id: 'A', name: 'Speaker A', suggestion: null }, { id: 'B', name: 'Tom', suggestion: null }, { id: 'C', name: 'Speaker C', suggestion: null }])

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

  test('one remembered voice is read by its id (getSpeakerProfile); another account\'s, the sandbox library\'s, an unknown or a forgotten one is 404', async () => {
    const { t, token, id } = await diarizedNote()
    await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' } })
    const [listed] = (await t.call('GET', '/v1/speakers', { token })).body.data
    const one = await t.call('GET', `/v1/speakers/${listed.id}`, { token })
    expect(one.status).toBe(200)
    expect(Object.keys(one.body).sort()).toEqual(['createdAt', 'engine', 'id', 'name', 'updatedAt'])
    expect(one.body).toMatchObject({ id: listed.id, name: 'Maria', engine: 'builtin' })
    expect(one.body).toEqual(listed)
    const other = await t.key({ email: 'other@example.com' })
    const sandbox = await t.key({ sandbox: true })
    for (const [who, key, path] of [['another account', other, listed.id], ['the same account\'s sandbox key', sandbox, listed.id], ['an unknown id', token, 'spk_01jd6x3m2k8v4n7p9q2r5s8t0w']]) {
      const r = await t.call('GET', `/v1/speakers/${path}`, { token: key })
      expect({ who, status: r.status, code: r.body.error?.code }).toEqual({ who, status: 404, code: 'not_found' })
    }
    const writeOnly = await t.key({ scopes: ['notes:write'] })
    expectEnvelope(await t.call('GET', `/v1/speakers/${listed.id}`, { token: writeOnly }), 403, 'insufficient_scope')
    expect((await t.call('DELETE', `/v1/speakers/${listed.id}`, { token })).status).toBe(204)
    expectEnvelope(await t.call('GET', `/v1/speakers/${listed.id}`, { token }), 404, 'not_found')
    // offered like every operation: in the API index (free, a read) and the OpenAPI document
    const index = (await t.call('GET', '/v1')).body
    expect({ credits: index.credits.perOperation.getSpeakerProfile, read: index.rateLimits.classes.read.operations.includes('getSpeakerProfile') }).toEqual({ credits: 0, read: true })
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    expect(doc.paths['/v1/speakers/{id}'].get).toMatchObject({ operationId: 'getSpeakerProfile', responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/SpeakerProfile' } } } } } })
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

  /** Voices remembered by the account of `token`, written as a rename leaves them: `live` in the live library, `sandbox` in the sandbox one. */
  async function rememberedVoices(t: ReturnType<typeof createTestApp>, noteId: string, o: { live: number; sandbox?: number }) {
    const account = (await t.store.get<{ account_id: string }>('SELECT account_id FROM notes WHERE id = ?', [noteId]))!.account_id
    const at = '2026-11-01T00:00:00.000Z'
    for (const [sandbox, n] of [[0, o.live], [1, o.sandbox ?? 0]] as const) {
      for (let i = 0; i < n; i++) {
        await t.store.run('INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          [`spk_seed_${sandbox}_${String(i).padStart(4, '0')}`, account, sandbox, `Voice ${String(i).padStart(4, '0')}`, 'builtin', JSON.stringify(PRINT(i % 8)), at, at])
      }
    }
    return account
  }
  const profileCount = async (t: ReturnType<typeof createTestApp>, account: string) => Number((await t.store.get<{ n: number | string }>('SELECT count(*) AS n FROM speaker_profiles WHERE account_id = ?', [account]))!.n)

  // Fails without the cap (1,000 renames made 1,009 voices) and without pagination (one answer held them all).
  test('remembered voices are listed a page at a time, by name, with limit, offset and hasMore', async () => {
    const { t, token, id } = await diarizedNote()
    await rememberedVoices(t, id, { live: 120, sandbox: 3 })
    const page = async (query: string) => (await t.call('GET', `/v1/speakers${query}`, { token })).body
    const first = await page('')
    expect(first.pagination).toEqual({ limit: 50, offset: 0, hasMore: true })
    expect(first.data.length).toBe(50)
    expect(first.data[0]).toMatchObject({ name: 'Voice 0000', engine: 'builtin' })
    const second = await page('?offset=50')
    expect({ n: second.data.length, first: second.data[0].name, pagination: second.pagination }).toEqual({ n: 50, first: 'Voice 0050', pagination: { limit: 50, offset: 50, hasMore: true } })
    const last = await page('?offset=100&limit=100')
    // the live library's 120 only: the sandbox's 3 are another library's
    expect({ n: last.data.length, first: last.data[0].name, lastName: last.data.at(-1).name, pagination: last.pagination }).toEqual({ n: 20, first: 'Voice 0100', lastName: 'Voice 0119', pagination: { limit: 100, offset: 100, hasMore: false } })
    expect(await page('?limit=20&offset=120')).toEqual({ data: [], pagination: { limit: 20, offset: 120, hasMore: false } })
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?offset=-1', 'offset'], ['?limit=ten', 'limit']]) {
      const r = await t.call('GET', `/v1/speakers${query}`, { token })
      expectEnvelope(r, 400, 'invalid_request')
      expect({ query, fields: r.body.error.details.map((d: { field: string }) => d.field) }).toEqual({ query, fields: [field] })
    }
  })

  test('at 500 voices a new name is given but not remembered, and the answer says so; a known name is still updated', async () => {
    const { t, token, id } = await diarizedNote()
    // 497 live and 2 sandbox: the account (both libraries) is one short of 500
    const account = await rememberedVoices(t, id, { live: 497, sandbox: 2 })
    const maria = await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' } })
    expect(maria.status).toBe(200)
    expect(maria.body.profileId).toStartWith('spk_')
    expect(maria.body.notice).toBeUndefined()
    expect(await profileCount(t, account)).toBe(500)

    const tom = await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } })
    expect(tom.status).toBe(200)
    expect(tom.body).toMatchObject({ id: 'B', name: 'Tom', displayName: 'Tom', profileId: null })
    expect(tom.body.notice).toContain('this account already remembers 500 voices, the most it may')
    expect(tom.body.notice).toContain('DELETE /v1/speakers/{id}')
    expect(tom.body.notice).toContain('NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT')
    expect(await profileCount(t, account)).toBe(500)
    // the name is given everywhere all the same
    expect((await t.call('GET', `/v1/notes/${id}/transcript?format=txt`, { token })).text).toContain('Tom: thanks I will order')

    // a name already remembered is updated, not added: no notice
    const again = await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Maria' } })
    expect({ profileId: again.body.profileId, notice: again.body.notice }).toEqual({ profileId: maria.body.profileId, notice: undefined })
    expect(await profileCount(t, account)).toBe(500)

    // one forgotten, the next name is remembered
    expect((await t.call('DELETE', '/v1/speakers/spk_seed_0_0000', { token })).status).toBe(204)
    const tomAgain = await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } })
    expect(tomAgain.body.profileId).toStartWith('spk_')
    expect(tomAgain.body.notice).toBeUndefined()
    expect(await profileCount(t, account)).toBe(500)
  })

  test('two renames at once for the last place: one voice remembered, the other named with a notice', async () => {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off', NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT: '3' } })
    const token = await t.key({ plan: 'pro' })
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav' } })
    const id = up.body.noteId as string
    await t.services.notes.saveTranscript(id, {
      transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS,
      speakers: ['A', 'B', 'C'].map((label, i) => ({ label, name: null, engine: 'builtin', embedding: PRINT(i), profileId: null })),
    })
    await t.services.notes.finish(id, { title: 't', summary: 's', language: 'en', segments: SEGMENTS, structuredContent: null })
    const account = await rememberedVoices(t, id, { live: 2 })
    const [b1, c1] = await Promise.all([
      t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } }),
      t.call('PATCH', `/v1/notes/${id}/speakers/C`, { token, body: { name: 'Ana' } }),
    ])
    expect([b1.status, c1.status]).toEqual([200, 200])
    expect([b1.body.profileId, c1.body.profileId].filter(Boolean).length).toBe(1)
    expect([b1.body.notice, c1.body.notice].filter(Boolean).length).toBe(1)
    expect(await profileCount(t, account)).toBe(3)
  })
})
