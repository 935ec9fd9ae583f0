/**
 * Summarize again through the API (`POST /v1/notes/{id}/summaries`, createNoteSummary), on both back
 * ends: 202 with the note Summarizing, charged as a text summary (SPEC: 2 credits; 0 with metering off
 * or a sandbox key), refunded when the summary fails for good; 409, 404, 402, 400 and 403 changing
 * nothing; and the stale marker a speaker reassignment sets until the summary is made again.
 * The summary stage itself (a recording through PocketSphinx) is tested in summary-again.test.ts.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createBuiltinEngine } from '../../../src/engines/llm/builtin'
import type { LlmEngine } from '../../../src/engines/llm/engine'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { until } from '../../helpers/process'

setDefaultTimeout(60_000)

/** SPEC "Credits": a free account's monthly grant, and what a summary costs. */
const FREE_GRANT = 60
const SUMMARY_COST = 2
const TEXT = 'We agreed to move the launch to March. Maria will update the budget by Friday. The design review is next week, and Tom owns the slides.'

/** The builtin summary engine, or one that fails every time while `failing` says so. */
function switchableSummaries() {
  const builtin = createBuiltinEngine()
  const state = { failing: false }
  const failing: LlmEngine = {
    name: 'failing', maxInputChars: builtin.maxInputChars,
    summarize: () => Promise.reject(new Error('the model crashed')),
    answer: () => Promise.reject(new Error('the model crashed')),
  }
  return { state, llm: async () => (state.failing ? failing : builtin) }
}

type App = ReturnType<typeof createTestApp>

for (const b of backEnds) describe.skipIf(b.skip)(`summarize a note again through the API, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function app(env: Record<string, string> = {}, llm?: () => Promise<LlmEngine>) {
    const t = createTestApp({
      store: await open(),
      engines: llm ? { llm } : undefined,
      env: { NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000', ...env },
    })
    return t
  }

  const settled = (t: App, token: string, id: string) => until(`note ${id} settles`, async () => {
    const s = (await t.call('GET', `/v1/notes/${id}/status`, { token })).body
    return s.status === 'Summarizing' ? null : s
  }, 50_000, 25)

  const textNote = async (t: App, token: string) => (await t.call('POST', '/v1/notes', { token, body: { title: 'Planning', content: TEXT } })).body.id as string
  const usage = async (t: App, token: string) => (await t.call('GET', '/v1/usage', { token })).body

  test('202 with the note Summarizing, 2 credits charged (body and X-Credits-Remaining), 409 while it waits; done, the summary is in the new style and the title and transcript stay', async () => {
    const t = await app()
    const token = await t.key({ plan: 'free' })
    const id = await textNote(t, token)
    const r = await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'meeting-notes' } })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ id, status: 'Summarizing', processingStage: 'summarizing', title: 'Planning', originalTranscription: TEXT, creditsCharged: SUMMARY_COST })
    expect(r.body.notice).toBeUndefined()
    expect(r.headers.get('x-credits-remaining')).toBe(String(FREE_GRANT - SUMMARY_COST))

    // no worker yet: asked again while it waits, refused and not charged
    const again = await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'bulletpoints' } })
    expectEnvelope(again, 409, 'conflict')
    expect(again.body.error.message).toContain(`GET /v1/notes/${id}/status`)
    const u = await usage(t, token)
    expect(u.balance.totalRemaining).toBe(FREE_GRANT - SUMMARY_COST)
    expect(u.recent.map((e: { operation: string; credits: number; noteId: string }) => [e.operation, e.credits, e.noteId])).toEqual([['createNoteSummary', SUMMARY_COST, id]])

    await t.services.workers.start()
    try {
      expect(await settled(t, token, id)).toMatchObject({ status: 'Done', errorCode: null })
    } finally {
      await t.services.workers.stop()
    }
    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect([note.styleId, Object.keys(note.structuredContent), note.title, note.originalTranscription]).toEqual(['meeting-notes', ['meeting-notes'], 'Planning', TEXT])
    expect(note.structuredContent['meeting-notes'].actionItems.map((a: { owner: string | null }) => a.owner)).toContain('Maria')
  })

  test('a summary that fails for good: the note Error with summarization_failed, its earlier summary kept, the 2 credits refunded', async () => {
    const summaries = switchableSummaries()
    const t = await app({}, summaries.llm)
    const token = await t.key({ plan: 'free' })
    const id = await textNote(t, token)
    const before = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    summaries.state.failing = true
    await t.services.workers.start()
    try {
      expect((await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'bulletpoints' } })).status).toBe(202)
      expect(await settled(t, token, id)).toMatchObject({ status: 'Error', errorCode: 'summarization_failed' })
    } finally {
      await t.services.workers.stop()
    }
    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect({ summary: note.summary, styleId: note.styleId, structuredContent: note.structuredContent }).toEqual({ summary: before.summary, styleId: before.styleId, structuredContent: before.structuredContent })
    const u = await usage(t, token)
    expect(u.balance.totalRemaining).toBe(FREE_GRANT)
    expect(u.recent.map((e: { operation: string; credits: number }) => [e.operation, e.credits])).toEqual([['refund:createNoteSummary', -SUMMARY_COST], ['createNoteSummary', SUMMARY_COST]])
  })

  test('another account\'s note is 404, a style outside the four is 400, a balance short of 2 is 402, a key without summaries:write is 403: each changes nothing', async () => {
    const t = await app()
    const token = await t.key({ plan: 'free' })
    const id = await textNote(t, token)
    const other = await t.key({ email: 'other@example.com', plan: 'free' })
    expectEnvelope(await t.call('POST', `/v1/notes/${id}/summaries`, { token: other, body: { styleId: 'note' } }), 404, 'not_found')

    const bad = await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'haiku' } })
    expectEnvelope(bad, 400, 'invalid_request')
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['styleId'])
    expectEnvelope(await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: {} }), 400, 'invalid_request')

    const readOnly = await t.key({ scopes: ['notes:read'] })
    expectEnvelope(await t.call('POST', `/v1/notes/${id}/summaries`, { token: readOnly, body: { styleId: 'note' } }), 403, 'insufficient_scope')

    // spend all but one credit of the grant
    const account = await t.services.accounts.requireAccount('user@example.com')
    await t.services.credits.charge({ accountId: account.id, operation: 'createSummary', credits: FREE_GRANT - 1, source: 'api_key' })
    const short = await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'note' } })
    expectEnvelope(short, 402, 'insufficient_credits')
    expect(short.body.error.message).toContain(`needs ${SUMMARY_COST} credits but 1 remain`)

    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect([note.status, note.styleId]).toEqual(['Done', 'note'])
    expect(await t.services.jobs.latestForNote(id)).toBeNull()
    expect((await usage(t, token)).recent.map((e: { operation: string }) => e.operation)).toEqual(['createSummary'])
    expect((await usage(t, other)).recent).toEqual([])
  })

  test('a sandbox key: the fixed summary at once, Done, 0 charged with a notice; with metering off a live key is charged 0', async () => {
    const t = await app()
    const sandbox = await t.key({ sandbox: true })
    const id = await textNote(t, sandbox)
    const r = await t.call('POST', `/v1/notes/${id}/summaries`, { token: sandbox, body: { styleId: 'bulletpoints' } })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ id, status: 'Done', styleId: 'bulletpoints', creditsCharged: 0 })
    expect(r.body.notice).toContain('no credits were charged')
    expect(r.body.structuredContent.bulletpoints.bullets[0]).toBe('Beta ships on March third.')
    expect(r.headers.get('x-credits-remaining')).toBe(String(FREE_GRANT))

    const off = await app({ NOTESVC_METERING: 'off' })
    const token = await off.key({ plan: 'free' })
    const noteId = await textNote(off, token)
    const free = await off.call('POST', `/v1/notes/${noteId}/summaries`, { token, body: { styleId: 'note' } })
    expect([free.status, free.body.creditsCharged, free.headers.get('x-credits-remaining')]).toEqual([202, 0, String(FREE_GRANT)])
    expect((await usage(off, token)).recent.map((e: { operation: string; credits: number }) => [e.operation, e.credits])).toEqual([['createNoteSummary', 0]])
  })

  test('a segment given to another speaker marks the summary stale until it is made again; naming a speaker does not', async () => {
    const t = await app({ NOTESVC_METERING: 'off' })
    const token = await t.key()
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'meeting.wav', contentType: 'audio/wav' } })
    const id = up.body.noteId as string
    const segments: TranscriptSegment[] = [
      { start: 0, end: 4, text: 'We agreed to move the launch to March.', speaker: 'A' },
      { start: 4.5, end: 8, text: 'I will update the budget by Friday.', speaker: 'B' },
      { start: 8.5, end: 12, text: 'Good, and I own the slides for the design review.', speaker: 'A' },
    ]
    await t.services.notes.saveTranscript(id, {
      transcript: segments.map(s => s.text).join(' '), language: 'en', segments,
      speakers: ['A', 'B'].map(label => ({ label, name: null, engine: 'builtin', embedding: null, profileId: null })),
    })
    await t.services.notes.finish(id, { summary: 'Speaker B updates the budget.', structuredContent: { note: { summary: 'Speaker B updates the budget.', sections: [] } }, language: 'en', segments })
    const stale = async () => (await t.call('GET', `/v1/notes/${id}`, { token })).body.summaryStale
    expect(await stale()).toBe(false)

    expect((await t.call('PATCH', `/v1/notes/${id}/speakers/B`, { token, body: { name: 'Maria' } })).status).toBe(200)
    expect(await stale()).toBe(false)
    // the same speaker again changes nothing
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/1`, { token, body: { speaker: 'B' } })).status).toBe(200)
    expect(await stale()).toBe(false)
    expect((await t.call('PATCH', `/v1/notes/${id}/segments/2`, { token, body: { speaker: 'B' } })).status).toBe(200)
    expect(await stale()).toBe(true)

    await t.services.workers.start()
    try {
      const r = await t.call('POST', `/v1/notes/${id}/summaries`, { token, body: { styleId: 'meeting-notes' } })
      expect([r.status, r.body.summaryStale]).toEqual([202, true])
      expect(await settled(t, token, id)).toMatchObject({ status: 'Done' })
    } finally {
      await t.services.workers.stop()
    }
    const note = (await t.call('GET', `/v1/notes/${id}`, { token })).body
    expect([note.summaryStale, note.styleId]).toEqual([false, 'meeting-notes'])
    expect(note.structuredContent['meeting-notes'].attendees).toContain('Maria')
  })
})
