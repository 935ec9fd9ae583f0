import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { notesRepoFor } from '../../../src/services'

/**
 * A note's transcript is written by one repository function (NotesRepo.saveTranscript): its text, its
 * segments and its speakers (with what each said, which search by speaker reads) in one transaction,
 * on both back ends. What a client sees is read through the API.
 */
const opened = closedAfterAll()

const SEGMENTS: TranscriptSegment[] = [
  { start: 0, end: 2.5, text: 'good morning everyone the budget is ready', speaker: 'A' },
  { start: 3, end: 5, text: 'thanks I will order the servers on friday', speaker: 'B' },
]

for (const b of backEnds) describe.skipIf(b.skip)(`a note's transcript saved on ${b.name}`, () => {
  async function diarizedNote() {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off' } })
    const token = await t.key({ plan: 'pro' })
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav' } })
    const id = up.body.noteId as string
    await t.services.notes.saveTranscript(id, {
      transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS,
      speakers: ['A', 'B'].map(label => ({ label, name: null, engine: null, embedding: null, profileId: null })),
    })
    await t.services.notes.finish(id, { title: 'Budget', summary: 'The budget.', language: 'en', structuredContent: null })
    const seen = async () => ({
      verbose: (await t.call('GET', `/v1/notes/${id}/transcript?format=verbose_json`, { token })).body,
      speakers: (await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data,
      budgetByA: (await t.call('GET', '/v1/notes?q=budget&speaker=Speaker%20A', { token })).body.data.length,
    })
    return { t, token, id, seen }
  }

  test('a save that fails part way writes nothing: the text, the segments and the speakers stay as they were', async () => {
    const { t, token, id, seen } = await diarizedNote()
    const before = await seen()
    expect(before.verbose.transcript).toBe('good morning everyone the budget is ready thanks I will order the servers on friday')
    expect(before.budgetByA).toBe(1)
    // a new text and segments, then two speakers of one label: the second row breaks the note's speakers' key
    const broken = {
      text: 'a different text',
      segments: [{ start: 0, end: 1, text: 'a different text', speaker: 'A' }],
      speakers: [
        { label: 'A', name: 'Maria', engine: null, embedding: null, profileId: null },
        { label: 'A', name: 'Tom', engine: null, embedding: null, profileId: null },
      ],
    }
    await expect(notesRepoFor(t.store).saveTranscript(id, broken, { title: 'Changed' })).rejects.toThrow()
    expect(await seen()).toEqual(before)
    expect((await t.call('GET', '/v1/notes?q=different', { token })).body.data).toEqual([])
  }, 30_000)

  test('search by an unnamed speaker takes the name shown in any case; once named, only the name', async () => {
    const { t, token, id } = await diarizedNote()
    const found = async (speaker: string) => (await t.call('GET', `/v1/notes?q=budget&speaker=${encodeURIComponent(speaker)}`, { token })).body.data.length
    expect([await found('Speaker A'), await found('speaker a'), await found('SPEAKER A'), await found('Speaker B'), await found('A')]).toEqual([1, 1, 1, 0, 0])
    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/A`, { token, body: { name: 'Speaker B' } })).status).toBe(200)
    // "Speaker B" is now A's name (who said "budget"); B, unnamed, is still shown as "Speaker B" and did not
    expect([await found('Speaker A'), await found('Speaker B'), await found('speaker b')]).toEqual([0, 1, 1])
  }, 30_000)
})
