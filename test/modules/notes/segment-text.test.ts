/**
 * A segment's words corrected (PATCH /v1/notes/{id}/segments/{index} with `text`), on both back ends:
 * a real recording (a LibriVox reading, PocketSphinx) uploaded and transcribed through the pipeline,
 * its misheard segment corrected to the words the reader said (pocketsphinx-testdata's transcription),
 * the words aligned to the audio again, and every view of the note changed at once.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPocketsphinxEngine } from '../../../src/engines/asr/pocketsphinx'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { until } from '../../helpers/process'
import { LIBRIVOX } from '../../fixtures/speech'

setDefaultTimeout(240_000)

/** The clip and what its reader said (pocketsphinx-testdata's `transcription`). */
const CLIP = 'sense_and_sensibility_01_austen_64kb-0880.wav'
const SAID = 'he was not an ill disposed young man'
/** How far a word heard by the engine and the same word aligned after the correction may be apart (the aligner's own tolerance). */
const TOLERANCE = 0.15

/** Polling the status every 50 ms passes the 120 reads a minute a key may make by default (CI's run did, then read 429s): not what is tested here. */
const POLLING = 'read=100000,write=100000,processing=100000'

type Word = { word: string; start: number; end: number }
type App = ReturnType<typeof createTestApp> & { token: string }

async function uploadToDone(t: App, wav: Uint8Array): Promise<string> {
  const up = (await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'chapter.wav', contentType: 'audio/wav', fileSize: wav.length } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(202)
  const end = await until(`note ${up.noteId} settles`, async () => {
    const s = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.token })).body
    return s.status === 'Summarizing' ? null : s
  }, 200_000, 50)
  expect([end.status, end.errorCode]).toEqual(['Done', null])
  return up.noteId
}

for (const b of backEnds) describe.skipIf(b.skip)(`a segment's words corrected on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function app(): Promise<App> {
    const asr = createPocketsphinxEngine()
    const t = createTestApp({ store: await open(), engines: { asr: () => asr }, env: { NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off', NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: POLLING } })
    await t.services.workers.start()
    return Object.assign(t, { token: await t.key() })
  }

  test('a misheard segment corrected to the words said: aligned word times, the text, SRT and search changed at once, the summary stale', async () => {
    const t = await app()
    try {
      const noteId = await uploadToDone(t, new Uint8Array(readFileSync(join(LIBRIVOX, CLIP))))
      const get = async (path: string) => (await t.call('GET', path, { token: t.token }))
      const before = (await get(`/v1/notes/${noteId}/transcript?format=verbose_json`)).body
      expect(before.segments.length).toBe(1)
      const heard = before.segments[0]
      const misheard = (before.words as Word[]).map(w => w.word).filter(w => !SAID.split(' ').includes(w))
      expect(misheard.length).toBeGreaterThan(0) // the engine got some words wrong: that is what is corrected
      expect((await get(`/v1/notes?q=${misheard[0]}`)).body.data.map((n: { id: string }) => n.id)).toEqual([noteId])

      const r = await t.call('PATCH', `/v1/notes/${noteId}/segments/0`, { token: t.token, body: { text: SAID } })
      expect(r.status).toBe(200)
      expect(r.body.segment).toMatchObject({ id: 0, text: SAID, timing: 'aligned', start: heard.start, end: heard.end })
      expect(r.body.segment.timingNote).toBeUndefined()
      const words = r.body.segment.words as (Word & { confidence: number })[]
      expect(words.map(w => w.word)).toEqual(SAID.split(' '))
      expect(words.every(w => w.confidence === 1)).toBe(true)
      // in order, inside the segment, each taking time
      for (const [i, w] of words.entries()) {
        expect(w.start).toBeGreaterThanOrEqual(heard.start)
        expect(w.end).toBeLessThanOrEqual(heard.end)
        expect(w.end).toBeGreaterThan(w.start)
        if (i > 0) expect(w.start).toBeGreaterThanOrEqual(words[i - 1]!.end)
      }
      // a word both heard and written is where the engine heard it (not spread by letters)
      const heardWords = before.words as Word[]
      for (const word of ['young', 'man']) {
        const h = heardWords.find(w => w.word === word)!
        const a = words.find(w => w.word === word)!
        expect({ word, start: Math.abs(a.start - h.start) <= TOLERANCE, end: Math.abs(a.end - h.end) <= TOLERANCE }).toEqual({ word, start: true, end: true })
      }

      const after = (await get(`/v1/notes/${noteId}/transcript?format=verbose_json`)).body
      expect(after.transcript).toBe(SAID)
      expect(after.segments[0]).toMatchObject({ text: SAID, timing: 'aligned' })
      expect((after.words as Word[]).map(w => w.word)).toEqual(SAID.split(' '))
      expect((await get(`/v1/notes/${noteId}/transcript?format=srt`)).text).toContain(SAID)
      expect((await get(`/v1/notes/${noteId}`)).body.originalTranscription).toBe(SAID)
      expect((await get('/v1/notes?q=disposed')).body.data.map((n: { id: string }) => n.id)).toEqual([noteId])
      // the summary, made from the misheard words, is stale (it still holds them) until it is made again
      expect((await get(`/v1/notes/${noteId}`)).body.summaryStale).toBe(true)
      expect((await t.call('POST', `/v1/notes/${noteId}/summaries`, { token: t.token, body: { styleId: 'note' } })).status).toBe(202)
      await until('the summary is made again', async () => ((await get(`/v1/notes/${noteId}/status`)).body.status === 'Done' ? true : null), 200_000, 50)
      expect((await get(`/v1/notes/${noteId}`)).body.summaryStale).toBe(false)
      expect((await get(`/v1/notes/${noteId}`)).body.summary).toContain('disposed')
      // the title, made from the first transcript, is not made again with the summary: renamed as a person would
      expect((await t.call('PATCH', `/v1/notes/${noteId}`, { token: t.token, body: { title: 'Not ill disposed' } })).status).toBe(200)
      expect((await get(`/v1/notes?q=${misheard[0]}`)).body.data).toEqual([])
      expect((await get('/v1/notes?q=disposed')).body.data.map((n: { id: string }) => n.id)).toEqual([noteId])
    } finally {
      await t.services.workers.stop()
    }
  })

  test('history: each edit a revision with its author, one shown, one restored; a second edit with the old If-Match gets 412 and nothing is lost; each edit in the audit log', async () => {
    const t = await app()
    try {
      const noteId = await uploadToDone(t, new Uint8Array(readFileSync(join(LIBRIVOX, CLIP))))
      const transcriptPath = `/v1/notes/${noteId}/transcript`
      const first = await t.call('GET', transcriptPath, { token: t.token })
      const heardText = first.body.transcript as string
      const etag = first.headers.get('etag')
      expect(etag).toBe('"0"')
      expect((await t.call('GET', `/v1/notes/${noteId}`, { token: t.token })).headers.get('etag')).toBe('"0"')
      expect((await t.call('GET', `/v1/notes/${noteId}/revisions`, { token: t.token })).body.data).toEqual([])

      // two people read version 0; the first saves, the second (still on version 0) is refused
      const patch = (text: string, ifMatch?: string) => t.call('PATCH', `/v1/notes/${noteId}/segments/0`, { token: t.token, body: { text }, ...(ifMatch ? { headers: { 'if-match': ifMatch } } : {}) })
      const mine = await patch(SAID, etag!)
      expect([mine.status, mine.headers.get('etag')]).toEqual([200, '"1"'])
      const theirs = await patch('he was not an ill tempered young man', etag!)
      expect(theirs.status).toBe(412)
      expect(theirs.body.error.code).toBe('precondition_failed')
      expect(theirs.body.error.message).toContain('version 1')
      expect(theirs.headers.get('etag')).toBe('"1"')
      expect((await t.call('GET', transcriptPath, { token: t.token })).body.transcript).toBe(SAID)
      // with the version they read again, theirs applies
      expect((await patch('he was not an ill tempered young man', '"1"')).status).toBe(200)
      // without If-Match an edit applies to whatever is current
      expect((await patch(SAID)).status).toBe(200)

      const list = (await t.call('GET', `/v1/notes/${noteId}/revisions`, { token: t.token })).body.data
      expect(list.map((r: { version: number; operation: string }) => [r.version, r.operation])).toEqual([[3, 'updateNoteSegment'], [2, 'updateNoteSegment'], [1, 'updateNoteSegment'], [0, 'transcribed']])
      expect(list[0].actor.type).toBe('key')
      expect(list[3].actor).toEqual({ type: null, id: null })
      const v0 = (await t.call('GET', `/v1/notes/${noteId}/revisions/0`, { token: t.token })).body
      expect(v0.transcript).toBe(heardText)
      expect((await t.call('GET', `/v1/notes/${noteId}/revisions/2`, { token: t.token })).body.transcript).toBe('he was not an ill tempered young man')
      expect((await t.call('GET', `/v1/notes/${noteId}/revisions/9`, { token: t.token })).status).toBe(404)
      const other = await t.key({ email: 'other@example.com' })
      expect((await t.call('GET', `/v1/notes/${noteId}/revisions/0`, { token: other })).status).toBe(404)
      expect((await t.call('POST', `/v1/notes/${noteId}/revisions/0/restore`, { token: other })).status).toBe(404)

      // undo back to what was heard: a new version 4 whose transcript is version 0's, everywhere at once
      const restored = await t.call('POST', `/v1/notes/${noteId}/revisions/0/restore`, { token: t.token, headers: { 'if-match': '"3"' } })
      expect([restored.status, restored.body]).toEqual([200, { version: 4, restoredFrom: 0 }])
      const now = (await t.call('GET', `${transcriptPath}?format=verbose_json`, { token: t.token }))
      expect(now.headers.get('etag')).toBe('"4"')
      expect(now.body.transcript).toBe(heardText)
      expect(now.body.segments[0].timing).toBeUndefined()
      expect((await t.call('GET', '/v1/notes?q=disposed', { token: t.token })).body.data).toEqual([])

      // two edits at once from version 4: one saved, the other refused, never both written over each other
      const both = await Promise.all([patch(SAID, '"4"'), patch('he was not an ill tempered young man', '"4"')])
      expect(both.map(r => r.status).sort()).toEqual([200, 412])
      const saved = both.find(r => r.status === 200)!.body.segment.text
      const end = await t.call('GET', transcriptPath, { token: t.token })
      expect([end.headers.get('etag'), end.body.transcript]).toEqual(['"5"', saved])

      const audit = (await t.call('GET', '/v1/audit-events?action=note.transcript_edited', { token: t.token })).body
      expect(audit.data.length).toBe(5)
      expect(audit.data.every((e: { target: { id: string }; actor: { type: string } }) => e.target.id === noteId && e.actor.type === 'key')).toBe(true)
    } finally {
      await t.services.workers.stop()
    }
  })

  test('without the recording (retention removed it) the words are timed in proportion and the segment says so; bad edits are refused and change nothing', async () => {
    const t = await app()
    try {
      const noteId = await uploadToDone(t, new Uint8Array(readFileSync(join(LIBRIVOX, CLIP))))
      const path = `/v1/notes/${noteId}/segments/0`
      const transcript = async () => (await t.call('GET', `/v1/notes/${noteId}/transcript?format=verbose_json`, { token: t.token })).body
      const before = await transcript()

      expect((await t.call('PATCH', path, { token: t.token, body: { text: 'he was\u0000 not' } })).body.error.code).toBe('invalid_request')
      const tooLong = await t.call('PATCH', path, { token: t.token, body: { text: 'word '.repeat(400_001) } })
      expect([tooLong.status, tooLong.body.error.code]).toEqual([400, 'invalid_request'])
      expect(tooLong.body.error.message).toContain('2000000')
      expect((await t.call('PATCH', `/v1/notes/${noteId}/segments/7`, { token: t.token, body: { text: SAID } })).status).toBe(404)
      const other = await t.key({ email: 'other@example.com' })
      expect((await t.call('PATCH', path, { token: other, body: { text: SAID } })).status).toBe(404)
      const waiting = (await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'later.wav', contentType: 'audio/wav' } })).body.noteId
      expect((await t.call('PATCH', `/v1/notes/${waiting}/segments/0`, { token: t.token, body: { text: SAID } })).status).toBe(409)
      expect(await transcript()).toEqual(before)

      // what the retention sweep does to a recording: its stored file deleted, the note kept
      expect(await t.services.storage.stat(`uploads/${noteId}`)).not.toBeNull()
      await t.services.storage.delete(`uploads/${noteId}`)
      const r = await t.call('PATCH', path, { token: t.token, body: { text: SAID } })
      expect(r.status).toBe(200)
      expect(r.body.segment.timing).toBe('proportional')
      expect(r.body.segment.timingNote).toContain('no longer stored')
      const words = r.body.segment.words as Word[]
      expect(words[0]!.start).toBe(before.segments[0].start)
      expect(words.at(-1)!.end).toBe(before.segments[0].end)
      expect((await transcript()).segments[0]).toMatchObject({ text: SAID, timing: 'proportional' })
    } finally {
      await t.services.workers.stop()
    }
  })
})
