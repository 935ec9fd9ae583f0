import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock, type CallResult } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { recordingEngine } from '../../helpers/engines'
import { makeWav } from '../../fixtures/wav'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

/**
 * The sandbox scenarios that are an error answer (docs/decisions.md "Sandbox scenarios"), as a client
 * sees them: the status, the envelope's code, Retry-After. Named by the upload's file name or the
 * `Notesvc-Scenario` header; live keys ignore both; an operation that does not declare the status
 * never answers it.
 */
const ERRORS = [
  { name: 'insufficient_credits', status: 402 },
  { name: 'upstream_failure', status: 502 },
] as const

/** The processing limit of these apps: a scenario's 429 must leave the real window as it was. */
const PROCESSING_LIMIT = 50
const ENV = { NOTESVC_RATE_LIMITS: `read=1000,write=1000,processing=${PROCESSING_LIMIT}` }


for (const b of backEnds) describe.skipIf(b.skip)(`sandbox scenarios that answer an error, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup() {
    const clock = fixedClock(new Date())
    const rec = recordingEngine()
    const t = createTestApp({ clock, store: await open(), env: ENV, engines: { asr: () => rec.engine } })
    return { ...t, clock, live: await t.key(), sandbox: await t.key({ sandbox: true }) }
  }
  type T = Awaited<ReturnType<typeof setup>>

  const startUpload = async (t: T, token: string, fileName: string, headers: Record<string, string> = {}) => {
    const r = await t.call('POST', '/v1/uploads', { token, body: { fileName, contentType: 'audio/wav' }, headers })
    expect(r.status).toBe(201)
    return r.body as { noteId: string; uploadUrl: string; headers: Record<string, string> }
  }
  const complete = (t: T, token: string, noteId: string, headers: Record<string, string> = {}) => t.call('POST', `/v1/uploads/${noteId}/complete`, { token, headers })
  const statusOf = async (t: T, token: string, noteId: string) => (await t.call('GET', `/v1/notes/${noteId}/status`, { token })).body
  const usage = async (t: T, token: string) => (await t.call('GET', '/v1/usage', { token })).body

  /** The scenario's answer says it is one, that nothing was charged, and how to get the normal answer. */
  function expectScenarioAnswer(res: CallResult, status: number, code: string) {
    expectEnvelope(res, status, code)
    expect(res.body.error.message).toContain(`sandbox scenario ${code}`)
    expect(res.body.error.message).toContain('nothing was charged')
    expect(res.body.error.message).toContain('Notesvc-Scenario')
  }

  for (const { name, status } of ERRORS) {
    test(`${name}: a sandbox upload named ${name}.wav (any case) is refused ${status} on completion, nothing charged, the upload still open`, async () => {
      const t = await setup()
      for (const fileName of [`${name}.wav`, `${name.toUpperCase()}.Mp3`]) {
        const up = await startUpload(t, t.sandbox, fileName)
        const res = await complete(t, t.sandbox, up.noteId)
        expectScenarioAnswer(res, status, name)
        expect(await statusOf(t, t.sandbox, up.noteId)).toMatchObject({ status: 'Summarizing', processingStage: 'awaiting_upload', isComplete: false })
        // asked again, the same answer: the upload was not completed
        expect((await complete(t, t.sandbox, up.noteId)).status).toBe(status)
      }
      expect((await usage(t, t.sandbox)).recent).toEqual([])
    })

    test(`${name}: the header Notesvc-Scenario answers ${status} on every operation that declares it, and only there`, async () => {
      const t = await setup()
      const headers = { 'Notesvc-Scenario': name }
      const up = await startUpload(t, t.sandbox, 'memo.wav', headers) // createUpload declares neither 402 nor 502
      expectScenarioAnswer(await complete(t, t.sandbox, up.noteId, headers), status, name)
      expectScenarioAnswer(await t.call('POST', '/v1/summaries', { token: t.sandbox, body: { text: 'We met and agreed.' }, headers }), status, name)
      expectScenarioAnswer(await t.call('POST', '/v1/transcriptions', { token: t.sandbox, body: { audioUrl: 'https://example.com/talk.mp3' }, headers }), status, name)
      // operations whose declared errors do not hold the status answer as usual
      expect((await t.call('GET', `/v1/notes/${up.noteId}/status`, { token: t.sandbox, headers })).status).toBe(200)
      expect((await t.call('GET', '/v1/notes', { token: t.sandbox, headers })).status).toBe(200)
      expect((await t.call('POST', '/v1/notes', { token: t.sandbox, body: { title: 'T', content: 'Text.' }, headers })).status).toBe(201)
      // the same upload without the header completes as an ordinary sandbox upload
      const done = await complete(t, t.sandbox, up.noteId)
      expect(done.status).toBe(202)
      expect(done.body.status).toBe('Done')
    })

    test(`${name}: a transcription URL whose file is named ${name} answers ${status}`, async () => {
      const t = await setup()
      const res = await t.call('POST', '/v1/transcriptions', { token: t.sandbox, body: { audioUrl: `https://example.com/media/${name}.mp3?sig=abc` } })
      expectScenarioAnswer(res, status, name)
      const plain = await t.call('POST', '/v1/transcriptions', { token: t.sandbox, body: { audioUrl: `https://example.com/${name}/talk.mp3` } })
      expect(plain.status).toBe(200)
    })
  }

  test('upstream_failure is not answered by createNoteSummary, which does not declare 502; insufficient_credits is', async () => {
    const t = await setup()
    const note = (await t.call('POST', '/v1/notes', { token: t.sandbox, body: { title: 'T', content: 'We met and agreed to ship.' } })).body
    const again = (scenario: string) => t.call('POST', `/v1/notes/${note.id}/summaries`, { token: t.sandbox, body: { styleId: 'bulletpoints' }, headers: { 'Notesvc-Scenario': scenario } })
    expect((await again('upstream_failure')).status).toBe(202)
    expectScenarioAnswer(await again('insufficient_credits'), 402, 'insufficient_credits')
    expect((await again('no_such_scenario')).status).toBe(202)
  })

  test('rate_limited: an upload named rate_limited.wav is refused 429 with Retry-After 1 until 1 s after its creation, then completes', async () => {
    const t = await setup()
    const up = await startUpload(t, t.sandbox, 'Rate_Limited.wav')
    const first = await complete(t, t.sandbox, up.noteId)
    expectScenarioAnswer(first, 429, 'rate_limited')
    expect(first.headers.get('retry-after')).toBe('1')
    expect(first.body.error.retry_after_seconds).toBe(1)
    // the real limiter was not spent: its window counts this request alone
    expect(first.headers.get('x-ratelimit-limit')).toBe(String(PROCESSING_LIMIT))
    expect(first.headers.get('x-ratelimit-remaining')).toBe(String(PROCESSING_LIMIT - 1))
    t.clock.advance(999)
    expect((await complete(t, t.sandbox, up.noteId)).status).toBe(429)
    t.clock.advance(1)
    const done = await complete(t, t.sandbox, up.noteId)
    expect(done.status).toBe(202)
    expect(done.body).toMatchObject({ noteId: up.noteId, status: 'Done', creditsCharged: 0, alreadyCompleted: false })
    expect(done.headers.get('x-ratelimit-remaining')).toBe(String(PROCESSING_LIMIT - 3))
  })

  test('rate_limited by header: an upload\'s completion follows the same 1 s rule; other operations answer 429 each time', async () => {
    const t = await setup()
    const headers = { 'notesvc-scenario': 'RATE_LIMITED' }
    const up = await startUpload(t, t.sandbox, 'memo.wav')
    expectScenarioAnswer(await complete(t, t.sandbox, up.noteId, headers), 429, 'rate_limited')
    const listed = await t.call('GET', '/v1/notes', { token: t.sandbox, headers })
    expectScenarioAnswer(listed, 429, 'rate_limited')
    expect(listed.headers.get('retry-after')).toBe('1')
    // the public operations are counted per address and answer as usual
    expect((await t.call('GET', '/v1', { headers })).status).toBe(200)
    t.clock.advance(1000)
    expect((await complete(t, t.sandbox, up.noteId, headers)).status).toBe(202)
    expect((await t.call('GET', '/v1/notes', { token: t.sandbox, headers })).status).toBe(429)
  })

  test('live keys ignore every scenario: the same file names and header get the normal outcome, charged', async () => {
    const t = await setup()
    const wav = makeWav({ seconds: 2 })
    for (const name of ['insufficient_credits', 'rate_limited', 'upstream_failure', 'note_error', 'slow', 'webhook_retry']) {
      const headers = { 'Notesvc-Scenario': name }
      const up = await startUpload(t, t.live, `${name}.wav`, headers)
      const put = await t.app.handle(new Request(up.uploadUrl, { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
      expect(put.status).toBe(200)
      const done = await complete(t, t.live, up.noteId, headers)
      expect(done.status).toBe(202)
      expect(done.body).toMatchObject({ status: 'Summarizing', creditsCharged: 1 })
      const summary = await t.call('POST', '/v1/summaries', { token: t.live, body: { text: 'We met and agreed to ship on Friday.' }, headers })
      expect(summary.status).toBe(200)
      expect(summary.body.creditsCharged).toBe(2)
    }
    expect((await usage(t, t.live)).recent).toHaveLength(12)
  })
})

describe('the API index', () => {
  test('GET /v1 lists the sandbox scenarios by name, each with its outcome', async () => {
    const t = createTestApp()
    const index = (await t.call('GET', '/v1')).body
    expect(index.sandbox.scenarios.names.map((s: { name: string }) => s.name)).toEqual(['insufficient_credits', 'rate_limited', 'upstream_failure', 'note_error', 'slow', 'webhook_retry'])
    for (const s of index.sandbox.scenarios.names) expect(s.outcome).toMatch(/\S/)
    expect(index.sandbox.scenarios.howToUse).toContain('Notesvc-Scenario')
  })
})
