/**
 * The file name a recording was uploaded as reaches the summary: when the speech engine heard no
 * sentence clearly (every word's confidence low), the builtin summarizer titles the note after the
 * file ("planning-meeting.wav" → "planning-meeting") rather than "Untitled recording".
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import type { AsrEngine, ChunkTranscription } from '../../../src/engines/asr/engine'
import { SAMPLE_RATE } from '../../../src/engines/asr/engine'
import { createTestApp } from '../../helpers/app'
import { until } from '../../helpers/process'
import { makeWav } from '../../fixtures/wav'

setDefaultTimeout(60_000)

/** An engine that hears three sentences, every word of them unsure (confidence 0.2). */
const unsure: AsrEngine = {
  name: 'unsure',
  wordTimes: true,
  async ready() {},
  async transcribeChunk(samples): Promise<ChunkTranscription> {
    const said = 'the budget is ten thousand dollars. we meet again on friday morning. anna sends the report to bob.'
    const seconds = samples.length / SAMPLE_RATE
    const tokens = said.split(' ')
    const step = seconds / tokens.length
    const words = tokens.map((w, i) => ({ word: w, start: i * step, end: (i + 1) * step, confidence: 0.2 }))
    return { segments: [{ start: 0, end: seconds, text: said, words }], language: 'en' }
  },
}

test('a recording heard unclearly is titled after its file name', async () => {
  const t = createTestApp({ engines: { asr: () => unsure }, env: { NOTESVC_DIARIZATION: 'off' } })
  await t.services.workers.start()
  try {
    const token = await t.key()
    const wav = makeWav({ seconds: 3 })
    const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'planning-meeting.wav', contentType: 'audio/wav', fileSize: wav.length } })).body
    const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
    expect(put.status).toBe(200)
    expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
    const note = await until('the note settles', async () => {
      const n = (await t.call('GET', `/v1/notes/${up.noteId}`, { token })).body
      return n.status === 'Done' || n.status === 'Error' ? n : null
    }, 50_000, 50)
    expect([note.status, note.title]).toEqual(['Done', 'planning-meeting'])
  } finally {
    await t.services.workers.stop()
  }
})
