import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Webhook } from 'standardwebhooks'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { webhookReceiver } from '../../helpers/webhook-receiver'
import { closingAfterEach } from '../../helpers/closing'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

/**
 * The sandbox scenarios that act on a note (docs/decisions.md "Sandbox scenarios"), seen through the
 * status endpoint and a webhook receiver on loopback: note_error, slow, webhook_retry; the short retry
 * schedule of sandbox endpoints; and an ordinary sandbox upload, whose fixed output does not change.
 */
const ENV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }

/** The sandbox's sample transcript (DECISIONS.md "Sandbox": fixed output), as a client reads it. */
const SAMPLE_TRANSCRIPT = 'Welcome everyone to the weekly planning meeting. First, the launch date: we agreed to ship the beta on March third. ' +
  'Maria will prepare the release notes by Friday. Tom raised a concern about the upload limits, and we decided to keep them at five gigabytes for now. ' +
  'Action item: Tom will write the migration guide before the launch. That is all for today, thank you.'

const receiver = webhookReceiver


for (const b of backEnds) describe.skipIf(b.skip)(`sandbox scenarios on a note, on ${b.name}`, () => {
  // the apps' workers stop before their stores close: hooks run in this order
  const apps: ReturnType<typeof createTestApp>[] = []
  afterEach(async () => { await Promise.all(apps.splice(0).map(a => a.services.workers.stop())) })
  const open = closingAfterEach(b)

  /** An app whose clock is fixed (webhook retries come due when the test moves it); `workers` starts its job workers. */
  async function setup(o: { workers?: boolean } = {}) {
    const clock = fixedClock(new Date())
    const t = createTestApp({ clock: o.workers ? undefined : clock, store: await open(), env: { ...ENV, NOTESVC_WORKERS: o.workers ? '1' : '0' } })
    apps.push(t)
    if (o.workers) await t.services.workers.start()
    const deliver = () => t.services.webhooks.deliverDue('test-sender')
    return { ...t, clock, deliver, sandbox: await t.key({ sandbox: true }), live: await t.key() }
  }
  type T = Awaited<ReturnType<typeof setup>>

  async function uploadAndComplete(t: T, fileName: string, headers: Record<string, string> = {}) {
    const up = await t.call('POST', '/v1/uploads', { token: t.sandbox, body: { fileName, contentType: 'audio/wav' } })
    expect(up.status).toBe(201)
    const done = await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: t.sandbox, headers })
    return { noteId: up.body.noteId as string, done }
  }
  const statusOf = async (t: T, noteId: string) => (await t.call('GET', `/v1/notes/${noteId}/status`, { token: t.sandbox })).body
  const hook = async (t: T, url: string, events = ['note.completed', 'note.failed']) =>
    (await t.call('POST', '/v1/webhooks', { token: t.sandbox, body: { url, events } })).body as { id: string; secret: string }
  const deliveries = async (t: T, id: string) => (await t.call('GET', `/v1/webhooks/${id}/deliveries`, { token: t.sandbox })).body.data as any[]

  test('an ordinary sandbox upload still gets the fixed sample note at once, and one delivery', async () => {
    const t = await setup()
    const r = receiver()
    await hook(t, r.url)
    const { noteId, done } = await uploadAndComplete(t, 'weekly sync.wav')
    expect(done.status).toBe(202)
    expect(done.body).toEqual({ noteId, status: 'Done', creditsCharged: 0, durationSeconds: 28.4, poll: `http://localhost/v1/notes/${noteId}/status`, alreadyCompleted: false })
    expect(await statusOf(t, noteId)).toEqual({ status: 'Done', processingStage: null, progress: 1, isComplete: true, hasError: false, errorMessage: null, errorCode: null })
    const transcript = (await t.call('GET', `/v1/notes/${noteId}/transcript`, { token: t.sandbox })).body
    expect(transcript).toEqual({ noteId, transcript: SAMPLE_TRANSCRIPT, language: 'en' })
    expect((await t.call('GET', `/v1/notes/${noteId}`, { token: t.sandbox })).body).toMatchObject({ title: 'weekly sync', status: 'Done', summary: expect.stringContaining('beta launch for March third') })
    expect(await t.deliver()).toBe(1)
    expect(r.got).toHaveLength(1)
    expect(JSON.parse(r.got[0]!.body)).toMatchObject({ type: 'note.completed', data: { noteId, status: 'Done', errorCode: null } })
  })

  for (const form of ['file name', 'header'] as const) {
    test(`note_error by ${form}: 202, then the status says Error, transcription_failed, and note.failed is delivered`, async () => {
      const t = await setup()
      const r = receiver()
      const made = await hook(t, r.url)
      const { noteId, done } = form === 'file name' ? await uploadAndComplete(t, 'Note_Error.m4a') : await uploadAndComplete(t, 'memo.wav', { 'Notesvc-Scenario': 'note_error' })
      expect(done.status).toBe(202)
      expect(done.body).toMatchObject({ noteId, status: 'Error', creditsCharged: 0, alreadyCompleted: false })
      const status = await statusOf(t, noteId)
      expect(status).toMatchObject({ status: 'Error', processingStage: 'transcribing', isComplete: false, hasError: true, errorCode: 'transcription_failed' })
      expect(status.errorMessage).toStartWith('Processing failed after several attempts (')
      expect(status.errorMessage).toContain('note_error')
      expect(await t.deliver()).toBe(1)
      const event = new Webhook(made.secret).verify(r.got[0]!.body, r.got[0]!.headers)
      expect(event).toMatchObject({ type: 'note.failed', data: { noteId, status: 'Error', errorCode: 'transcription_failed' } })
      // completing again is the usual 200
      const again = await t.call('POST', `/v1/uploads/${noteId}/complete`, { token: t.sandbox })
      expect(again.body).toMatchObject({ status: 'Error', alreadyCompleted: true })
    })
  }

  test('webhook_retry: the first attempt is recorded failed, retried 1 s later: the receiver gets the same webhook-id twice', async () => {
    const t = await setup()
    const r = receiver()
    const made = await hook(t, r.url)
    const { noteId } = await uploadAndComplete(t, 'webhook_retry.wav')
    expect(await t.deliver()).toBe(1)
    expect(await t.deliver()).toBe(0) // not due yet
    t.clock.advance(999)
    expect(await t.deliver()).toBe(0)
    t.clock.advance(1)
    expect(await t.deliver()).toBe(1)
    t.clock.advance(60_000)
    expect(await t.deliver()).toBe(0)

    expect(r.got).toHaveLength(2)
    expect(r.got[0]!.headers['webhook-id']).toBe(r.got[1]!.headers['webhook-id']!)
    for (const g of r.got) expect(new Webhook(made.secret).verify(g.body, g.headers)).toMatchObject({ type: 'note.completed', data: { noteId } })
    const log = await deliveries(t, made.id)
    expect(log.map(d => [d.attempt, d.status, d.responseCode])).toEqual([[2, 'delivered', 200], [1, 'failed', 200]])
    expect(log[1].error).toContain('webhook_retry')
    expect(log[0].error).toBeNull()
  })

  test('sandbox endpoints are retried 1 s, 2 s, then 5 s after a failure; live endpoints keep the 5 s, 30 s schedule', async () => {
    const t = await setup()
    const r = receiver([500, 500, 500, 200])
    const made = await hook(t, r.url)
    await uploadAndComplete(t, 'memo.wav')
    const gaps: number[] = []
    expect(await t.deliver()).toBe(1)
    for (let i = 0; i < 3; i++) {
      const [row] = await t.services.webhooks.outboxOf(made.id)
      gaps.push(Date.parse(row!.run_after) - t.clock.now().getTime())
      t.clock.set(row!.run_after) // the moment it is due
      expect(await t.deliver()).toBe(1)
    }
    expect(gaps).toEqual([1_000, 2_000, 5_000])
    expect(r.got).toHaveLength(4)
    expect((await deliveries(t, made.id)).map(d => d.status)).toEqual(['delivered', 'failed', 'failed', 'failed'])

    // a live endpoint's event (its note settled as the notes module reports it): the normal schedule
    const liveAccount = (await t.services.accounts.createKey({ email: 'live@example.com' })).account
    const lr = receiver([500, 200])
    const liveHook = await t.services.webhooks.create({ accountId: liveAccount.id, sandbox: false }, { url: lr.url, events: ['note.completed'] })
    await t.services.webhooks.noteSettled({ noteId: 'note_live', accountId: liveAccount.id, sandbox: false, status: 'Done', errorCode: null })
    const before = t.clock.now().getTime()
    expect(await t.deliver()).toBe(1)
    const [row] = await t.services.webhooks.outboxOf(liveHook.id)
    expect(Date.parse(row!.run_after) - before).toBe(5_000)
  })

  test('slow: the status shows transcribing with progress rising below 1, then Done with the sample note and note.completed', async () => {
    const t = await setup({ workers: true })
    const r = receiver()
    await hook(t, r.url)
    const { noteId, done } = await uploadAndComplete(t, 'SLOW.wav')
    expect(done.status).toBe(202)
    expect(done.body).toMatchObject({ noteId, status: 'Summarizing', creditsCharged: 0, alreadyCompleted: false })
    const seen: number[] = []
    let last: any
    for (let polls = 0; polls < 2000; polls++) {
      last = await statusOf(t, noteId)
      if (last.status !== 'Summarizing') break
      expect(last).toMatchObject({ processingStage: 'transcribing', isComplete: false, hasError: false })
      if (seen.at(-1) !== last.progress) seen.push(last.progress)
      await Bun.sleep(20)
    }
    expect(last).toEqual({ status: 'Done', processingStage: null, progress: 1, isComplete: true, hasError: false, errorMessage: null, errorCode: null })
    expect(seen[0]).toBe(0.25)
    expect(seen.length).toBeGreaterThanOrEqual(2)
    for (let i = 0; i < seen.length; i++) {
      expect(seen[i]!).toBeGreaterThan(0)
      expect(seen[i]!).toBeLessThan(1)
      if (i > 0) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!)
    }
    const transcript = (await t.call('GET', `/v1/notes/${noteId}/transcript`, { token: t.sandbox })).body
    expect(transcript.transcript).toBe(SAMPLE_TRANSCRIPT)
    // the workers' sender delivers the event (polled: the test asserts what arrives, not when)
    for (let polls = 0; polls < 500 && r.got.length === 0; polls++) await Bun.sleep(20)
    expect(r.got.map(g => JSON.parse(g.body))).toMatchObject([{ type: 'note.completed', data: { noteId, status: 'Done' } }])
  })

  test('slow is a job: stopped half-way, it waits; another process\'s workers finish it from the step it reached', async () => {
    const t = await setup({ workers: true })
    const { noteId } = await uploadAndComplete(t, 'slow.wav')
    for (let polls = 0; polls < 2000 && (await statusOf(t, noteId)).progress !== 0.5; polls++) await Bun.sleep(20)
    await t.services.workers.stop()
    // stopped at 0.5 (or, on a machine slow enough to pass a step between the poll and the stop, 0.75)
    const stopped = await statusOf(t, noteId)
    expect(stopped).toMatchObject({ status: 'Summarizing', processingStage: 'transcribing' })
    const nextStep: Record<number, string> = { 0.5: 'three_quarters', 0.75: 'finish' }
    const job = await t.services.jobs.latestForNote(noteId)
    expect([job?.kind, job?.status, job?.stage]).toEqual(['sandbox_slow', 'queued', nextStep[stopped.progress]])
    await Bun.sleep(1500) // nothing runs it meanwhile: still where it stopped
    expect((await statusOf(t, noteId)).progress).toBe(stopped.progress)

    const other = createTestApp({ store: t.store, env: { ...ENV, NOTESVC_WORKERS: '1' } })
    apps.push(other)
    await other.services.workers.start()
    const seen: number[] = []
    let last: any
    for (let polls = 0; polls < 2000; polls++) {
      last = await statusOf(t, noteId)
      if (last.status !== 'Summarizing') break
      if (seen.at(-1) !== last.progress) seen.push(last.progress)
      await Bun.sleep(20)
    }
    expect(last).toMatchObject({ status: 'Done', isComplete: true })
    // never back to an earlier step
    for (const p of seen) expect(p).toBeGreaterThanOrEqual(stopped.progress)
  })
})
