/**
 * A summary made again for an existing note by the summary stage alone (`summarizeAgain` in
 * src/modules/processing/pipeline.ts, the `summarize_note` job), on both back ends: a real recording
 * (a LibriVox reading, PocketSphinx) uploaded, transcribed and summarized through the upload pipeline,
 * then summarized again in another style by a job that runs only the summary stage.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AsrEngine } from '../../../src/engines/asr/engine'
import { createPocketsphinxEngine } from '../../../src/engines/asr/pocketsphinx'
import { createBuiltinEngine } from '../../../src/engines/llm/builtin'
import type { LlmEngine } from '../../../src/engines/llm/engine'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { recordingEngine } from '../../helpers/engines'
import { until } from '../../helpers/process'
import { LIBRIVOX } from '../../fixtures/speech'
import { makeWav } from '../../fixtures/wav'

// two recordings through PocketSphinx per back end, on a shared machine
setDefaultTimeout(240_000)

/** PocketSphinx, counting the chunks it is asked to transcribe. */
function countedPocketsphinx() {
  const real = createPocketsphinxEngine()
  let chunks = 0
  const engine: AsrEngine = {
    name: real.name,
    wordTimes: real.wordTimes,
    englishOnly: () => real.englishOnly?.() ?? false,
    ready: () => real.ready(),
    transcribeChunk: (samples, opts) => {
      chunks++
      return real.transcribeChunk(samples, opts)
    },
  }
  return { engine, chunks: () => chunks }
}

/** The builtin summary engine, or one that fails every time while `failing` says so. */
function switchableSummaries() {
  const builtin = createBuiltinEngine()
  const state = { failing: false, calls: 0 }
  const failing: LlmEngine = {
    name: 'failing', maxInputChars: builtin.maxInputChars,
    async summarize() {
      state.calls++
      throw new Error('the model crashed')
    },
    answer: () => Promise.reject(new Error('the model crashed')),
  }
  return { state, llm: async () => (state.failing ? failing : builtin) }
}

type App = ReturnType<typeof createTestApp> & { token: string }

/** Upload → PUT → complete; returns once the note is Done (or fails the test with its status). */
async function uploadToDone(t: App, wav: Uint8Array, styleId: string): Promise<string> {
  const up = (await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'chapter.wav', contentType: 'audio/wav', fileSize: wav.length, styleId } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })).status).toBe(202)
  const end = await settled(t, up.noteId)
  expect([end.status, end.errorCode]).toEqual(['Done', null])
  return up.noteId
}

/** The note's status once it is no longer processing. */
const settled = (t: App, noteId: string) => until(`note ${noteId} settles`, async () => {
  const s = (await t.call('GET', `/v1/notes/${noteId}/status`, { token: t.token })).body
  return s.status === 'Summarizing' ? null : s
}, 200_000, 50)

/** What a person reads of a note: the note, its transcript (JSON and with times), and the account's usage. */
async function read(t: App, noteId: string) {
  const get = async (path: string) => {
    const r = await t.call('GET', path, { token: t.token })
    expect([path, r.status]).toEqual([path, 200])
    return r.body
  }
  return {
    note: await get(`/v1/notes/${noteId}`),
    transcript: await get(`/v1/notes/${noteId}/transcript`),
    timed: await get(`/v1/notes/${noteId}/transcript?format=verbose_json`),
    usage: await get('/v1/usage'),
  }
}

async function libraryOf(t: App, email = 'user@example.com') {
  return { accountId: (await t.services.accounts.requireAccount(email)).id, sandbox: false }
}

for (const b of backEnds) describe.skipIf(b.skip)(`a summary made again by the summary stage alone, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** An app with its workers started; `beside`: a second process on the same database, with the same key. */
  async function app(o: { asr: AsrEngine; llm?: () => Promise<LlmEngine>; beside?: App }): Promise<App> {
    const t = createTestApp({
      store: o.beside?.store ?? await open(),
      engines: { asr: () => o.asr, ...(o.llm ? { llm: o.llm } : {}) },
      env: { NOTESVC_WORKERS: '2', NOTESVC_DIARIZATION: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' },
    })
    await t.services.workers.start()
    return Object.assign(t, { token: o.beside?.token ?? await t.key() })
  }

  test('a recording transcribed through the pipeline, summarized again in another style: the structured content in that style, the transcript untouched, the speech engine not called, nothing charged', async () => {
    const speech = countedPocketsphinx()
    const t = await app({ asr: speech.engine })
    let other: App | null = null
    try {
      // a reading heard clearly enough for the builtin engine to summarize it (words mostly above 0.7)
      const wav = new Uint8Array(readFileSync(join(LIBRIVOX, 'sense_and_sensibility_01_austen_64kb-0920.wav')))
      const noteId = await uploadToDone(t, wav, 'note')
      const before = await read(t, noteId)
      expect(before.note.styleId).toBe('note')
      expect(Object.keys(before.note.structuredContent)).toEqual(['note'])
      expect(before.transcript.transcript.split(' ').length).toBeGreaterThan(10)
      const chunksHeard = speech.chunks()
      expect(chunksHeard).toBeGreaterThan(0)
      expect(before.usage.recent.map((u: { operation: string }) => u.operation)).toEqual(['completeUpload'])

      // queued while this process's workers are stopped: what the note shows until a worker takes the job
      await t.services.workers.stop()
      const lib = await libraryOf(t)
      expect(await t.services.pipeline.summarizeAgain(lib, noteId, 'bulletpoints')).toMatchObject({ status: 'Summarizing', processingStage: 'summarizing', progress: 1, isComplete: false, hasError: false })
      expect(await t.services.jobs.latestForNote(noteId)).toMatchObject({ kind: 'summarize_note', status: 'queued', stage: null, payload: '{"styleId":"bulletpoints"}' })
      // asked again while it waits: refused, nothing more queued
      await expect(t.services.pipeline.summarizeAgain(lib, noteId, 'meeting-notes')).rejects.toMatchObject({ code: 'conflict', status: 409 })

      // a worker of another process on the database takes it (the job is a row of the queue)
      other = await app({ asr: speech.engine, beside: t })
      expect(await settled(other, noteId)).toMatchObject({ status: 'Done', processingStage: null, errorCode: null })
      const after = await read(other, noteId)
      expect(after.note.styleId).toBe('bulletpoints')
      expect(Object.keys(after.note.structuredContent)).toEqual(['bulletpoints'])
      const bullets = after.note.structuredContent.bulletpoints.bullets as string[]
      expect(bullets.length).toBeGreaterThan(0)
      expect(after.note.summary).toBe(bullets.map(line => `- ${line}`).join('\n'))
      // the transcript, its times and the note's title as they were; the speech engine not called again
      expect(after.note.originalTranscription).toBe(before.note.originalTranscription)
      expect(after.transcript).toEqual(before.transcript)
      expect(after.timed).toEqual(before.timed)
      expect(after.note.title).toBe(before.note.title)
      expect(speech.chunks()).toBe(chunksHeard)
      // nothing charged, nothing refunded
      expect(after.usage).toEqual(before.usage)
      expect(await t.services.jobs.latestForNote(noteId)).toMatchObject({ kind: 'summarize_note', status: 'done', attempts: 1, stage: null })

      // the same summary the pipeline makes when the same recording is uploaded in that style
      const direct = (await read(other, await uploadToDone(other, wav, 'bulletpoints'))).note
      expect({ summary: after.note.summary, structuredContent: after.note.structuredContent }).toEqual({ summary: direct.summary, structuredContent: direct.structuredContent })
    } finally {
      await t.services.workers.stop()
      await other?.services.workers.stop()
    }
  })

  test('a summary made again that fails: Error with summarization_failed, the transcript readable and the earlier summary kept, nothing refunded', async () => {
    const speech = recordingEngine()
    const summaries = switchableSummaries()
    const t = await app({ asr: speech.engine, llm: summaries.llm })
    try {
      const noteId = await uploadToDone(t, makeWav({ seconds: 5 }), 'note')
      const before = await read(t, noteId)
      summaries.state.failing = true
      await t.services.pipeline.summarizeAgain(await libraryOf(t), noteId, 'meeting-notes')
      const end = await settled(t, noteId)
      expect(end).toMatchObject({ status: 'Error', processingStage: 'summarizing', errorCode: 'summarization_failed' })
      expect(end.errorMessage).toContain('Summarizing the transcript again in the meeting-notes style failed: the model crashed')
      expect(end.errorMessage).toContain('ask for the summary again')
      // tried once more before failing, as an upload's summary is
      expect(summaries.state.calls).toBe(2)
      const transcript = await t.call('GET', `/v1/notes/${noteId}/transcript`, { token: t.token })
      expect([transcript.status, transcript.body]).toEqual([200, before.transcript])
      const note = (await t.call('GET', `/v1/notes/${noteId}`, { token: t.token })).body
      expect({ styleId: note.styleId, summary: note.summary, structuredContent: note.structuredContent }).toEqual({ styleId: 'note', summary: before.note.summary, structuredContent: before.note.structuredContent })
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body).toEqual(before.usage)

      // the engine answers again: the summary made again on the failed note is Done in that style
      summaries.state.failing = false
      await t.services.pipeline.summarizeAgain(await libraryOf(t), noteId, 'meeting-notes')
      expect(await settled(t, noteId)).toMatchObject({ status: 'Done', errorCode: null })
      expect(Object.keys((await t.call('GET', `/v1/notes/${noteId}`, { token: t.token })).body.structuredContent)).toEqual(['meeting-notes'])
    } finally {
      await t.services.workers.stop()
    }
  })

  test('a note from text is summarized again like a transcript; another library\'s note is 404; a sandbox note gets the style\'s fixed summary at once', async () => {
    const speech = recordingEngine()
    const t = await app({ asr: speech.engine })
    try {
      const text = 'We agreed to move the launch to March. Maria will update the budget by Friday. The design review is next week, and Tom owns the slides.'
      const created = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Planning', content: text } })).body
      await t.services.pipeline.summarizeAgain(await libraryOf(t), created.id, 'bulletpoints')
      expect(await settled(t, created.id)).toMatchObject({ status: 'Done' })
      const note = (await t.call('GET', `/v1/notes/${created.id}`, { token: t.token })).body
      expect([note.styleId, Object.keys(note.structuredContent), note.originalTranscription, note.title]).toEqual(['bulletpoints', ['bulletpoints'], text, 'Planning'])

      const other = await t.key({ email: 'other@example.com' })
      await expect(t.services.pipeline.summarizeAgain(await libraryOf(t, 'other@example.com'), created.id, 'note')).rejects.toMatchObject({ code: 'not_found', status: 404 })
      expect((await t.call('GET', `/v1/notes/${created.id}`, { token: other })).status).toBe(404)

      const sandboxKey = await t.key({ sandbox: true })
      const sandboxNote = (await t.call('POST', '/v1/notes', { token: sandboxKey, body: { title: 'Sample', content: text } })).body
      const status = await t.services.pipeline.summarizeAgain({ ...(await libraryOf(t)), sandbox: true }, sandboxNote.id, 'bulletpoints')
      expect(status).toMatchObject({ status: 'Done', isComplete: true })
      expect(await t.services.jobs.latestForNote(sandboxNote.id)).toBeNull()
      const fixed = (await t.call('GET', `/v1/notes/${sandboxNote.id}`, { token: sandboxKey })).body
      expect([fixed.styleId, Object.keys(fixed.structuredContent), fixed.structuredContent.bulletpoints.bullets[0]]).toEqual(['bulletpoints', ['bulletpoints'], 'Beta ships on March third.'])
      expect(speech.calls).toEqual([])
    } finally {
      await t.services.workers.stop()
    }
  })
})
