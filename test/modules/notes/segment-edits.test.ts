/**
 * Split, merge and reassign a word range through the API (issue 31), on both back ends: a diarized
 * transcript with word times saved as the pipeline saves it; the times of the new segments, SRT and
 * VTT, verbose_json's speakers, what each speaker said (search by speaker), the revision, If-Match,
 * and the refusals, each changing nothing.
 */
import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'

const opened = closedAfterAll()

const w = (word: string, start: number, end: number) => ({ word, start, end, confidence: 0.9 })
/** Two segments: Maria (A) says the first, B the second; word times as an engine gives them. */
const SEGMENTS = [
  { start: 0, end: 2.5, text: 'the budget is ready order the servers', speaker: 'A', words: [w('the', 0.1, 0.3), w('budget', 0.3, 0.8), w('is', 0.85, 1.0), w('ready', 1.0, 1.4), w('order', 1.6, 1.9), w('the', 1.9, 2.0), w('servers', 2.0, 2.4)] },
  { start: 3, end: 4.2, text: 'agreed on friday', speaker: 'B', words: [w('agreed', 3.1, 3.5), w('on', 3.6, 3.7), w('friday', 3.75, 4.1)] },
]

for (const b of backEnds) describe.skipIf(b.skip)(`segments split, merged and reassigned on ${b.name}`, () => {
  async function setup() {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off' } })
    const token = await t.key({ plan: 'pro' })
    const id = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'm.wav', contentType: 'audio/wav' } })).body.noteId as string
    await t.services.notes.saveTranscript(id, { transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS, speakers: ['A', 'B'].map(label => ({ label, name: label === 'A' ? 'Maria' : null, engine: null, embedding: null, profileId: null })) })
    await t.services.notes.finish(id, { title: 'Budget', summary: 'The budget.', language: 'en', segments: SEGMENTS, structuredContent: null })
    const get = async (path: string, tok = token) => t.call('GET', path, { token: tok })
    const post = (path: string, body: unknown, headers: Record<string, string> = {}, tok = token) => t.call('POST', `/v1/notes/${id}/segments/${path}`, { token: tok, body, headers })
    const verbose = async () => (await get(`/v1/notes/${id}/transcript?format=verbose_json`)).body
    const said = async (speaker: string, q: string) => (await get(`/v1/notes?q=${q}&speaker=${encodeURIComponent(speaker)}`)).body.data.length
    return { t, token, id, get, post, verbose, said }
  }
  const cues = (srt: string) => srt.trim().split(/\n\n/).map(c => c.split('\n').slice(1).join(' | '))

  test('split at a word: two segments timed at the word boundaries, same speaker; SRT, VTT and the revision follow', async () => {
    const { id, get, post, verbose } = await setup()
    const r = await post('0/split', { word: 4 }, { 'if-match': '"0"' })
    expect([r.status, r.headers.get('etag')]).toEqual([200, '"1"'])
    // the answer is the whole transcript as verbose_json: "ready" ends at 1.4, "order" starts at 1.6
    expect(r.body.segments.map((s: any) => [s.id, s.start, s.end, s.text, s.speaker])).toEqual([
      [0, 0, 1.4, 'the budget is ready', 'Maria'], [1, 1.6, 2.5, 'order the servers', 'Maria'], [2, 3, 4.2, 'agreed on friday', 'Speaker B'],
    ])
    expect(await verbose()).toEqual(r.body)
    // (a cue under 1 s stays up a second when the next starts later: 0.9 s of "order the servers" shown 1 s)
    expect(cues((await get(`/v1/notes/${id}/transcript?format=srt`)).text)).toEqual([
      '00:00:00,000 --> 00:00:01,400 | Maria: the budget is ready', '00:00:01,600 --> 00:00:02,600 | Maria: order the servers', '00:00:03,000 --> 00:00:04,200 | Speaker B: agreed on friday',
    ])
    expect((await get(`/v1/notes/${id}/transcript?format=vtt`)).text).toContain('00:00:01.600 --> 00:00:02.600\n<v Maria>order the servers</v>')
    const revisions = (await get(`/v1/notes/${id}/revisions`)).body.data
    expect(revisions.map((v: any) => [v.version, v.operation])).toEqual([[1, 'splitNoteSegment'], [0, 'transcribed']])
    // the same If-Match again: someone changed it since
    const stale = await post('1/split', { word: 1 }, { 'if-match': '"0"' })
    expect([stale.status, stale.body.error.code, stale.headers.get('etag')]).toEqual([412, 'precondition_failed', '"1"'])
    expect((await verbose()).segments).toHaveLength(3)
  })

  test('merge: one segment from the first\'s start to the second\'s end, the first\'s speaker (or the one sent); what each said follows', async () => {
    const { post, verbose, said } = await setup()
    expect(await said('Speaker B', 'friday')).toBe(1)
    const r = await post('0/merge', {})
    expect(r.status).toBe(200)
    expect(r.body.segments.map((s: any) => [s.start, s.end, s.text, s.speakerId])).toEqual([[0, 4.2, 'the budget is ready order the servers agreed on friday', 'A']])
    expect(r.body.words.map((x: any) => x.word)).toEqual([...SEGMENTS[0]!.words, ...SEGMENTS[1]!.words].map(x => x.word))
    expect(await said('Maria', 'friday')).toBe(1)
    expect(await said('Speaker B', 'friday')).toBe(0)
    // split back, then merged as said by B
    expect((await post('0/split', { word: 7 })).status).toBe(200)
    const byB = await post('0/merge', { speaker: 'B' })
    expect(byB.body.segments.map((s: any) => s.speaker)).toEqual(['Speaker B'])
    expect((await verbose()).speakers).toEqual([{ id: 'A', name: 'Maria' }, { id: 'B', name: 'Speaker B' }])
  })

  test('reassign words 4..6 to B: three segments, what each speaker said and the speakers\' time follow; to a new speaker C, C is added unnamed', async () => {
    const { t, id, token, get, post, said } = await setup()
    const r = await post('0/reassign', { fromWord: 4, toWord: 6, speaker: 'B' })
    expect(r.status).toBe(200)
    expect(r.body.segments.map((s: any) => [s.start, s.end, s.text, s.speakerId])).toEqual([
      [0, 1.4, 'the budget is ready', 'A'], [1.6, 2.5, 'order the servers', 'B'], [3, 4.2, 'agreed on friday', 'B'],
    ])
    expect(await said('Speaker B', 'servers')).toBe(1)
    expect(await said('Maria', 'servers')).toBe(0)
    const speakers = (await get(`/v1/notes/${id}/speakers`)).body.data.map((s: any) => [s.id, s.segments, s.seconds])
    expect(speakers).toEqual([['A', 1, 1.4], ['B', 2, 2.1]])
    expect((await get(`/v1/notes/${id}`)).body.summaryStale).toBe(true)

    const c = await post('0/reassign', { fromWord: 1, toWord: 1, speaker: 'C' })
    expect(c.body.segments.map((s: any) => [s.text, s.speaker])).toEqual([['the', 'Maria'], ['budget', 'Speaker C'], ['is ready', 'Maria'], ['order the servers', 'Speaker B'], ['agreed on friday', 'Speaker B']])
    expect(c.body.speakers).toEqual([{ id: 'A', name: 'Maria' }, { id: 'B', name: 'Speaker B' }, { id: 'C', name: 'Speaker C' }])
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/C`, { token, body: { name: 'Tom' } })).status).toBe(200)
    expect(await said('Tom', 'budget')).toBe(1)
  })

  test('bad input is a clear error and changes nothing: words out of range, toWord before fromWord, a label no speaker may have, no next segment, another account, a note processing or without times', async () => {
    const { t, id, token, verbose } = await setup()
    const before = await verbose()
    const refused = async (path: string, body: unknown, status: number, code: string, says: string, tok = token, note = id) => {
      const r = await t.call('POST', `/v1/notes/${note}/segments/${path}`, { token: tok, body })
      expect([path, r.status, r.body.error?.code]).toEqual([path, status, code])
      expect(r.body.error.message).toContain(says)
    }
    await refused('0/split', { word: 7 }, 404, 'not_found', 'has 7 words, numbered 0 to 6')
    await refused('0/split', { word: 0 }, 400, 'invalid_request', 'send a word from 1 to 6')
    await refused('0/split', { word: -1 }, 400, 'invalid_request', 'word')
    await refused('0/split', {}, 400, 'invalid_request', 'word')
    await refused('5/split', { word: 1 }, 404, 'not_found', 'has no segment 5; it has 2')
    await refused('1/merge', {}, 404, 'not_found', 'no segment 2 to merge segment 1 with')
    await refused('0/reassign', { fromWord: 3, toWord: 1, speaker: 'B' }, 400, 'invalid_request', 'toWord (1) is before fromWord (3)')
    await refused('0/reassign', { fromWord: 1, toWord: 9, speaker: 'B' }, 404, 'not_found', 'no word 9')
    await refused('0/reassign', { fromWord: 1, toWord: 2, speaker: 'maria' }, 400, 'invalid_request', 'a new speaker\'s label: a capital letter')
    await refused('0/reassign', { fromWord: 1, toWord: 2, speaker: 'A' }, 400, 'invalid_request', 'already said by speaker A')
    await refused('0/split', { word: 2 }, 404, 'not_found', 'note', await t.key({ email: 'other@example.com' }))
    const waiting = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'later.wav', contentType: 'audio/wav' } })).body.noteId
    await refused('0/split', { word: 1 }, 409, 'conflict', 'still processing', token, waiting)
    const text = (await t.call('POST', '/v1/notes', { token, body: { title: 'Typed', content: 'one two three' } })).body.id
    await refused('0/split', { word: 1 }, 409, 'conflict', 'find and replace', token, text)
    expect(await verbose()).toEqual(before)
    expect((await t.call('GET', `/v1/notes/${id}/revisions`, { token })).body.data).toEqual([])
  })
})
