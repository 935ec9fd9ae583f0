import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'

/**
 * `GET /v1/notes/{id}/transcript?format=diarized_json`, on both back ends: a note's transcript in the
 * shape OpenAI's `diarized_json` has (as POST /v1/audio/transcriptions answers it), each segment with
 * its speaker's name as the note shows it, and every later change (a name, corrected words) in it.
 * The pipeline's writes are made through the notes service as the pipeline makes them (as
 * speakers.test.ts does); everything after is what a client does.
 */
const opened = closedAfterAll()

const SEGMENTS: TranscriptSegment[] = [
  { start: 0, end: 2.5, text: 'good morning everyone the budget is ready', speaker: 'A' },
  { start: 3, end: 5, text: 'thanks I will order the servers on friday', speaker: 'B' },
  { start: 5.5, end: 8, text: 'great the budget covers two servers', speaker: 'A' },
]

for (const b of backEnds) describe.skipIf(b.skip)(`diarized_json of a note on ${b.name}`, () => {
  async function app() {
    const store = await b.open()
    opened.push(store)
    const t = createTestApp({ store, env: { NOTESVC_METERING: 'off' } })
    return { t, token: await t.key() }
  }

  /** A recording of `segments` transcribed (and diarized when they have speakers) and finished as the pipeline does. */
  async function recordedNote(t: ReturnType<typeof createTestApp>, token: string, segments: TranscriptSegment[]) {
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav' } })
    const id = up.body.noteId as string
    const labels = [...new Set(segments.flatMap(s => (s.speaker ? [s.speaker] : [])))]
    const transcript = segments.map(s => s.text).join(' ')
    await t.services.notes.saveTranscript(id, {
      transcript, language: 'en', segments,
      speakers: labels.map((label, i) => ({ label, name: null, engine: 'builtin', embedding: [i, 1], profileId: null })),
    })
    await t.services.notes.finish(id, { title: 'Budget', summary: 's', language: 'en', segments, structuredContent: null })
    return id
  }

  const diarized = (t: ReturnType<typeof createTestApp>, token: string, id: string) => t.call('GET', `/v1/notes/${id}/transcript?format=diarized_json`, { token })

  test('OpenAI\'s shape: segments with the speaker\'s name, start, end and text; a name given and a corrected segment show in it', async () => {
    const { t, token } = await app()
    const id = await recordedNote(t, token, SEGMENTS)
    const before = await diarized(t, token, id)
    expect(before.status).toBe(200)
    expect(before.headers.get('content-type')).toStartWith('application/json')
    expect(before.headers.get('content-disposition')).toContain('Budget.json')
    expect(before.body).toEqual({
      task: 'transcribe',
      duration: 8,
      text: 'good morning everyone the budget is ready thanks I will order the servers on friday great the budget covers two servers',
      segments: [
        { type: 'transcript.text.segment', id: 'seg_0', start: 0, end: 2.5, text: 'good morning everyone the budget is ready', speaker: 'Speaker A' },
        { type: 'transcript.text.segment', id: 'seg_1', start: 3, end: 5, text: 'thanks I will order the servers on friday', speaker: 'Speaker B' },
        { type: 'transcript.text.segment', id: 'seg_2', start: 5.5, end: 8, text: 'great the budget covers two servers', speaker: 'Speaker A' },
      ],
      usage: { type: 'duration', seconds: 8 },
    })

    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Tom' } })).status).toBe(200)
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/1`, { token, body: { text: 'thanks, I will order the servers on Friday.' } })).status).toBe(200)
    const after = (await diarized(t, token, id)).body
    expect(after.segments[1]).toEqual({ type: 'transcript.text.segment', id: 'seg_1', start: 3, end: 5, text: 'thanks, I will order the servers on Friday.', speaker: 'Tom' })
    expect(after.segments.map((s: { speaker: string }) => s.speaker)).toEqual(['Speaker A', 'Tom', 'Speaker A'])
    expect(after.text).toContain('thanks, I will order the servers on Friday.')
  })

  test('a recording that was not diarized: one speaker, "Speaker A", on every segment', async () => {
    const { t, token } = await app()
    const id = await recordedNote(t, token, SEGMENTS.map(({ speaker: _, ...s }) => s))
    const r = await diarized(t, token, id)
    expect(r.status).toBe(200)
    expect(r.body.segments.map((s: { speaker: string; start: number }) => [s.start, s.speaker])).toEqual([[0, 'Speaker A'], [3, 'Speaker A'], [5.5, 'Speaker A']])
  })

  test('a note created from text has no times: 409 that says why and what to ask for instead, like srt', async () => {
    const { t, token } = await app()
    const id = (await t.call('POST', '/v1/notes', { token, body: { title: 'Minutes', content: 'Budget first.\n\nThen hiring.' } })).body.id
    const r = await diarized(t, token, id)
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('conflict')
    expect(r.body.error.message).toContain('created from text')
    expect(r.body.error.message).toContain('diarized_json')
    expect(r.body.error.message).toContain('format=txt')
    expect(r.headers.get('content-disposition')).toBeNull()
  })
})
