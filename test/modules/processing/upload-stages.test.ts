/**
 * An upload's job is two stages (src/modules/processing/pipeline.ts: transcribe, then summarize), and
 * its row remembers the stage it reached: a run that stops during the summary (the process shut down,
 * or its worker died) is taken up again at the summary, without transcribing the recording again. On
 * both back ends, with two apps on one database as two worker processes.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { AsrEngine } from '../../../src/engines/asr/engine'
import type { LlmEngine } from '../../../src/engines/llm/engine'
import type { MediaStorage } from '../../../src/storage/storage'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { recordingEngine } from '../../helpers/engines'
import { until } from '../../helpers/process'
import { makeWav } from '../../fixtures/wav'

setDefaultTimeout(60_000)

/** A summary engine that never answers: it waits until the run is told to stop. */
function summaryThatHangs() {
  const state = { calls: 0 }
  const engine: LlmEngine = {
    name: 'hanging', maxInputChars: 100_000,
    summarize(_input, signal) {
      state.calls++
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }))
    },
    answer: () => Promise.reject(new Error('not asked')),
  }
  return { state, llm: async () => engine }
}

for (const b of backEnds) describe.skipIf(b.skip)(`an upload's stages on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** An app on `store`; `storage`: another app's, as two worker processes on one data folder share it. */
  function app(store: Awaited<ReturnType<typeof open>>, o: { asr: AsrEngine; llm?: () => Promise<LlmEngine>; storage?: MediaStorage }) {
    return createTestApp({ store, storage: o.storage, engines: { asr: () => o.asr, ...(o.llm ? { llm: o.llm } : {}) }, env: { NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off' } })
  }

  test('a run stopped during the summary is taken up again at the summary: the recording is not transcribed again, and the job is charged and counted once', async () => {
    const speech = recordingEngine()
    const hanging = summaryThatHangs()
    const store = await open()
    const first = app(store, { asr: speech.engine, llm: hanging.llm })
    await first.services.workers.start()
    const token = await first.key()
    const up = (await first.call('POST', '/v1/uploads', { token, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })).body
    const put = await first.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: makeWav({ seconds: 4 }) as unknown as BodyInit, headers: up.headers }))
    expect(put.status).toBe(200)
    expect((await first.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
    await until('the summary is under way', () => hanging.state.calls === 1)
    const heard = speech.calls.length
    expect(heard).toBeGreaterThan(0)
    // the transcript was stored when the job moved on to its summary
    expect((await first.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body).toMatchObject({ status: 'Summarizing', processingStage: 'summarizing', progress: 1 })

    // the process stops: the job goes back to the queue at the stage it reached
    await first.services.workers.stop()
    expect(await first.services.jobs.latestForNote(up.noteId)).toMatchObject({ kind: 'process_upload', status: 'queued', stage: 'summarize', attempts: 1, last_error: 'interrupted by shutdown' })

    // another worker process (the builtin summary engine) takes it up
    const second = app(store, { asr: speech.engine, storage: first.services.storage })
    await second.services.workers.start()
    try {
      const end = await until('the note settles', async () => {
        const s = (await second.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
        return s.status === 'Summarizing' ? null : s
      }, 30_000)
      expect([end.status, end.errorCode]).toEqual(['Done', null])
    } finally {
      await second.services.workers.stop()
    }
    expect(speech.calls.length).toBe(heard)
    expect(await second.services.jobs.latestForNote(up.noteId)).toMatchObject({ kind: 'process_upload', status: 'done', stage: 'summarize', attempts: 2 })
    const note = (await second.call('GET', `/v1/notes/${up.noteId}`, { token })).body
    expect(note.originalTranscription).toMatch(/^Heard \d+\.\d\d seconds\./)
    expect(Object.keys(note.structuredContent)).toEqual(['note'])
    const usage = (await second.call('GET', '/v1/usage', { token })).body
    expect(usage.recent.map((r: { operation: string; credits: number }) => [r.operation, r.credits])).toEqual([['completeUpload', 1]])
  })
})
