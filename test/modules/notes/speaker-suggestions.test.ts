/**
 * A remembered voice offered for a speaker and answered by a person (issue 31, "Voices: suggest,
 * never apply silently"), through the API on both back ends: the pipeline runs with engines that
 * stand in for the speech and the voices (test/helpers/stand-in-voices.ts: prints the test chooses,
 * reported as the builtin engine's, so its threshold 0.93 applies).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { otherVoice, printAlike, standInVoices, twoSentences, uploadSettled } from '../../helpers/stand-in-voices'

setDefaultTimeout(120_000)

interface Speaker { id: string; name: string | null; displayName: string; profileId: string | null; suggestion: { profileId: string; name: string; similarity: number } | null }

for (const b of backEnds) describe.skipIf(b.skip)(`voice suggestions on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const v = standInVoices()
    const t = createTestApp({ store: await open(), engines: { asr: () => twoSentences, diarization: () => v.engine }, env: { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_METERING: 'off' } })
    const token = await t.key({ plan: 'pro' })
    const speakers = async (id: string): Promise<Speaker[]> => (await t.call('GET', `/v1/notes/${id}/speakers`, { token })).body.data
    const answer = (id: string, label: string, body: unknown, headers: Record<string, string> = {}) =>
      t.call('POST', `/v1/notes/${id}/speakers/${label}/suggestion`, { token, body, headers })
    return { v, t, token, speakers, answer }
  }

  test('offered, not applied, listed everywhere; confirmed: the name applied, a revision, the voice confirmed; dismissed: gone; a different voice not offered', async () => {
    const { v, t, token, speakers, answer } = await setup()
    // never delivered here (no sender runs): what note.completed says is read from the outbox
    const hook = (await t.call('POST', '/v1/webhooks', { token, body: { url: 'http://127.0.0.1:8080/hook', events: ['note.completed'] } })).body
    await t.services.workers.start()
    try {
      const monday = await uploadSettled(t, token, 'monday.wav')
      const named = await t.call('PATCH', `/v1/notes/${monday}/speakers/A`, { token, body: { name: 'Clara' } })
      expect(named.body).toMatchObject({ name: 'Clara', suggestion: null })
      const clara = named.body.profileId as string
      expect(clara).toStartWith('spk')

      // the same voice in a new recording: offered with its similarity, the name left null
      v.state.prints = [printAlike(0.95), otherVoice()]
      const tuesday = await uploadSettled(t, token, 'tuesday.wav')
      const offered = { profileId: clara, name: 'Clara', similarity: 0.95 }
      expect(await speakers(tuesday)).toEqual([
        { id: 'A', name: null, displayName: 'Speaker A', segments: 1, seconds: 2, profileId: null, suggestion: offered },
        { id: 'B', name: null, displayName: 'Speaker B', segments: 1, seconds: 2, profileId: null, suggestion: null },
      ] as unknown as Speaker[])
      const listed = [{ id: 'A', name: 'Speaker A', suggestion: offered }, { id: 'B', name: 'Speaker B', suggestion: null }]
      expect((await t.call('GET', `/v1/notes/${tuesday}/transcript`, { token })).body.speakers).toEqual(listed)
      expect((await t.call('GET', `/v1/notes/${tuesday}/transcript?format=verbose_json`, { token })).body.speakers).toEqual(listed)
      const srt = (await t.call('GET', `/v1/notes/${tuesday}/transcript?format=srt`, { token })).text
      expect(srt).toContain('Speaker A: The budget is ten thousand.')
      const completed = (await t.services.webhooks.outboxOf(hook.id)).map(o => JSON.parse(o.payload)).find(p => p.data.noteId === tuesday)
      expect(completed.data.speakers).toEqual(listed)

      // a stale If-Match is refused, nothing applied
      const stale = await answer(tuesday, 'A', { accept: true }, { 'if-match': '"3"' })
      expectEnvelope(stale, 412, 'precondition_failed')
      expect(stale.headers.get('etag')).toBe('"0"')
      expect((await speakers(tuesday))[0]).toMatchObject({ name: null, suggestion: offered })

      // confirmed: named everywhere, one revision, the suggestion gone
      const confirmed = await answer(tuesday, 'A', { accept: true }, { 'if-match': '"0"' })
      expect([confirmed.status, confirmed.headers.get('etag')]).toEqual([200, '"1"'])
      expect(confirmed.body).toEqual({ id: 'A', name: 'Clara', displayName: 'Clara', segments: 1, seconds: 2, profileId: clara, suggestion: null })
      expect((await t.call('GET', `/v1/notes/${tuesday}/transcript?format=srt`, { token })).text).toContain('Clara: The budget is ten thousand.')
      expect((await t.call('GET', `/v1/notes/${tuesday}/transcript`, { token })).body.speakers).toEqual([{ id: 'A', name: 'Clara', suggestion: null }, { id: 'B', name: 'Speaker B', suggestion: null }])
      expect((await t.call('GET', `/v1/notes/${tuesday}/revisions`, { token })).body.data.map((r: { version: number; operation: string }) => [r.version, r.operation]))
        .toEqual([[1, 'answerSpeakerSuggestion'], [0, 'transcribed']])
      expectEnvelope(await answer(tuesday, 'A', { accept: true }), 404, 'not_found')
      const audit = (await t.call('GET', '/v1/audit-events?action=note.transcript_edited', { token })).body
      expect(audit.data.map((e: { target: { id: string }; details: { operation: string } }) => [e.target.id, e.details.operation])).toEqual([[tuesday, 'answerSpeakerSuggestion'], [monday, 'updateNoteSpeaker']])

      // dismissed: cleared, nothing named, not offered again for this note
      v.state.prints = [printAlike(0.95), otherVoice()]
      const wednesday = await uploadSettled(t, token, 'wednesday.wav')
      expect((await speakers(wednesday))[0]!.suggestion?.name).toBe('Clara')
      const dismissed = await answer(wednesday, 'A', { accept: false })
      expect([dismissed.status, dismissed.headers.get('etag')]).toEqual([200, '"1"'])
      expect(dismissed.body).toMatchObject({ id: 'A', name: null, displayName: 'Speaker A', profileId: null, suggestion: null })
      expect((await speakers(wednesday)).map(s => [s.id, s.name, s.suggestion])).toEqual([['A', null, null], ['B', null, null]])
      expectEnvelope(await answer(wednesday, 'A', { accept: false }), 404, 'not_found')
      // undoing the dismissal does not offer it again
      expect((await t.call('POST', `/v1/notes/${wednesday}/revisions/0/restore`, { token })).status).toBe(200)
      expect((await speakers(wednesday))[0]!.suggestion).toBeNull()

      // the confirmation kept tuesday's print for Clara: a voice 0.95 alike tuesday's (0.81 alike monday's) is offered
      v.state.prints = [printAlike(0.81), otherVoice()]
      const thursday = await uploadSettled(t, token, 'thursday.wav')
      expect((await speakers(thursday)).map(s => [s.id, s.suggestion && [s.suggestion.name, s.suggestion.similarity]])).toEqual([['A', ['Clara', 0.953]], ['B', null]])
      // a voice forgotten takes its suggestions with it
      expect((await t.call('DELETE', `/v1/speakers/${clara}`, { token })).status).toBe(204)
      expect((await speakers(thursday))[0]!.suggestion).toBeNull()
      expectEnvelope(await answer(thursday, 'A', { accept: true }), 404, 'not_found')
    } finally {
      await t.services.workers.stop()
    }
  })

  test('a name given by hand answers the suggestion; bad answers get 400 and 404, nothing written', async () => {
    const { v, t, token, speakers, answer } = await setup()
    await t.services.workers.start()
    try {
      const monday = await uploadSettled(t, token, 'monday.wav')
      expect((await t.call('PATCH', `/v1/notes/${monday}/speakers/A`, { token, body: { name: 'Clara' } })).status).toBe(200)
      v.state.prints = [printAlike(0.97), otherVoice()]
      const tuesday = await uploadSettled(t, token, 'tuesday.wav')
      for (const body of [{}, { accept: 'yes' }, { accept: true, name: 'Tom' }, null]) expectEnvelope(await answer(tuesday, 'A', body), 400, 'invalid_request')
      const unknown = await answer(tuesday, 'Z', { accept: true })
      expectEnvelope(unknown, 404, 'not_found')
      expect(unknown.body.error.message).toContain(`GET /v1/notes/${tuesday}/speakers`)
      const none = await answer(tuesday, 'B', { accept: true })
      expectEnvelope(none, 404, 'not_found')
      expect(none.body.error.message).toContain(`PATCH /v1/notes/${tuesday}/speakers/B`)
      expect((await t.call('GET', `/v1/notes/${tuesday}/revisions`, { token })).body.data).toEqual([])

      const renamed = await t.call('PATCH', `/v1/notes/${tuesday}/speakers/A`, { token, body: { name: 'Anna', remember: false } })
      expect(renamed.body).toMatchObject({ name: 'Anna', suggestion: null })
      expect((await speakers(tuesday)).map(s => [s.name, s.suggestion])).toEqual([['Anna', null], [null, null]])
    } finally {
      await t.services.workers.stop()
    }
  })
})
