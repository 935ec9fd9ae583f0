/**
 * The title made again (issue 31): a title notesvc made (the file name, the summary's) is made again
 * with the summary after a correction; a title a person gave (a note created from text, PATCH
 * /v1/notes/{id}) never changes. On both back ends, through the pipeline and the API.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { AsrEngine, ChunkTranscription } from '../../../src/engines/asr/engine'
import { SAMPLE_RATE } from '../../../src/engines/asr/engine'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { until } from '../../helpers/process'
import { makeWav } from '../../fixtures/wav'

setDefaultTimeout(120_000)

/** What was said, and what the engine heard instead: every word unsure (confidence 0.2), several wrong. */
const SAID = 'The budget is ten thousand dollars. We meet again on Friday morning. Anna sends the report to Bob.'
const HEARD = 'the bud jet is tan thousand doll ours. we meat again on fried a morning. and a sends the rapport to bob.'

const misheard: AsrEngine = {
  name: 'misheard',
  wordTimes: true,
  async ready() {},
  async transcribeChunk(samples): Promise<ChunkTranscription> {
    const seconds = samples.length / SAMPLE_RATE
    const tokens = HEARD.split(' ')
    const step = seconds / tokens.length
    const words = tokens.map((w, i) => ({ word: w, start: i * step, end: (i + 1) * step, confidence: 0.2 }))
    return { segments: [{ start: 0, end: seconds, text: HEARD, words }], language: 'en' }
  },
}

/** Lower-case words of a text, without punctuation. */
const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []

for (const b of backEnds) describe.skipIf(b.skip)(`the title made again on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const t = createTestApp({ store: await open(), engines: { asr: () => misheard }, env: { NOTESVC_DIARIZATION: 'off', NOTESVC_METERING: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
    await t.services.workers.start()
    const token = await t.key({ plan: 'pro' })
    const settled = (id: string) => until(`${id} settles`, async () => {
      const n = (await t.call('GET', `/v1/notes/${id}`, { token })).body
      return n.status === 'Done' || n.status === 'Error' ? n : null
    }, 60_000, 50)
    const upload = async (fileName: string, titled?: string) => {
      const wav = makeWav({ seconds: 3 })
      const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName, contentType: 'audio/wav', fileSize: wav.length } })).body
      if (titled) expect((await t.call('PATCH', `/v1/notes/${up.noteId}`, { token, body: { title: titled } })).status).toBe(200)
      await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
      expect((await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })).status).toBe(202)
      return up.noteId as string
    }
    /** The note's one segment corrected to what was said, then its summary made again: the note once Done. */
    const correctedAndSummarized = async (id: string) => {
      expect((await t.call('PATCH', `/v1/notes/${id}/segments/0`, { token, body: { text: SAID } })).status).toBe(200)
      expect((await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'note' } })).status).toBe(202)
      return settled(id)
    }
    return { t, token, settled, upload, correctedAndSummarized }
  }

  test('a misheard upload titled after its file; corrected and summarized again: titled from the corrected words', async () => {
    const { t, upload, settled, correctedAndSummarized } = await setup()
    try {
      const id = await upload('planning-meeting.wav')
      expect((await settled(id)).title).toBe('planning-meeting')
      const after = await correctedAndSummarized(id)
      expect(after.status).toBe('Done')
      expect(after.title).not.toBe('planning-meeting')
      // a sentence of what was said: every word of it said, none only misheard
      expect(wordsOf(after.title).length).toBeGreaterThan(2)
      expect(wordsOf(after.title).filter(w => !wordsOf(SAID).includes(w))).toEqual([])
    } finally {
      await t.services.workers.stop()
    }
  })

  test("a title a person gave stays: renamed after processing or before it, or given with a note created from text", async () => {
    const { t, token, upload, settled, correctedAndSummarized } = await setup()
    try {
      const id = await upload('planning-meeting.wav')
      await settled(id)
      expect((await t.call('PATCH', `/v1/notes/${id}`, { token, body: { title: 'Budget review' } })).status).toBe(200)
      expect((await correctedAndSummarized(id)).title).toBe('Budget review')

      // named before its first summary: the summary's title does not replace it either
      const early = await upload('standup.wav', 'Standup, Monday')
      expect((await settled(early)).title).toBe('Standup, Monday')
      expect((await correctedAndSummarized(early)).title).toBe('Standup, Monday')

      const typed = (await t.call('POST', '/v1/notes', { token, body: { title: 'Friday notes', content: SAID } })).body
      expect((await t.call('POST', `/v1/notes/${typed.id}/summaries`, { token, body: { styleId: 'meeting-notes' } })).status).toBe(202)
      expect((await settled(typed.id)).title).toBe('Friday notes')
    } finally {
      await t.services.workers.stop()
    }
  })
})
