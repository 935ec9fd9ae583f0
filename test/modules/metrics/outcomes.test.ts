/**
 * GET /metrics: the outcomes other than success, each moved by exactly what was done, read with the
 * same independent parser as metrics.test.ts (parse-prometheus-text-format, npm). Webhook deliveries
 * to real receivers on loopback: `failed` (a receiver answering 500, and its retry), `disabled` (a
 * receiver answering 410 Gone), `refused` (the same database served by a process without
 * NOTESVC_ALLOW_PRIVATE_URLS: the endpoint registered under it is refused by the URL policy at
 * delivery, and nothing is sent). `notesvc_jobs_total{outcome="failed"}` for an upload whose file is
 * not audio (media_unreadable, failed for good at its first run). On both back ends.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import type { Server } from 'bun'
import { makeWav } from '../../fixtures/wav'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { until } from '../../helpers/process'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(60_000)

const TOKEN = 'metrics-token-for-the-test-0123456789'
const LIMITS = { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000', NOTESVC_METRICS_TOKEN: TOKEN }
const DEV = { ...LIMITS, NOTESVC_ALLOW_PRIVATE_URLS: '1' }
/** The first retry of a failed delivery is due this long after it (docs/webhooks: 5 s, 30 s, …). */
const FIRST_RETRY_MS = 5_000

type Counts = Record<string, number>

/** The samples of notesvc_webhook_deliveries_total and notesvc_jobs_total by outcome, as the parser reads them. */
function outcomes(text: string): { deliveries: Counts; jobs: Counts } {
  const families = parsePrometheusTextFormat(text)
  const byOutcome = (name: string): Counts => {
    const family = families.find(f => f.name === name)
    expect(family?.type).toBe('COUNTER')
    return Object.fromEntries(family!.metrics.map(m => [m.labels!.outcome!, Number(m.value)]))
  }
  return { deliveries: byOutcome('notesvc_webhook_deliveries_total'), jobs: byOutcome('notesvc_jobs_total') }
}

/** What each outcome moved by between two scrapes. */
const moved = (before: Counts, after: Counts): Counts => Object.fromEntries(Object.keys(after).map(k => [k, after[k]! - (before[k] ?? 0)]))

/** A webhook receiver on loopback answering every request with `status`; `got` counts what it received. */
const servers: Server<unknown>[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true)
})
function receiver(status: number) {
  const r = { url: '', got: 0 }
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch() { r.got++; return new Response('no', { status }) } })
  servers.push(server)
  r.url = `http://127.0.0.1:${server.port}/hooks`
  return r
}

for (const b of backEnds) describe.skipIf(b.skip)(`GET /metrics: what did not succeed, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function scrape(t: ReturnType<typeof createTestApp>) {
    const res = await t.call('GET', '/metrics', { token: TOKEN })
    expect(res.status).toBe(200)
    return outcomes(res.text)
  }

  test('webhook deliveries: failed (500, and its retry), disabled (410), refused (the URL policy at delivery), each counted once per attempt', async () => {
    const store = await open()
    const clock = fixedClock(new Date())
    const dev = createTestApp({ clock, store, env: DEV })
    const sandbox = await dev.key({ sandbox: true })
    const broken = receiver(500)
    const gone = receiver(410)
    for (const url of [broken.url, gone.url]) {
      expect((await dev.call('POST', '/v1/webhooks', { token: sandbox, body: { url, events: ['note.completed'] } })).status).toBe(201)
    }
    const before = await scrape(dev)
    // the outcomes are shown at 0 from the start
    expect(before.deliveries).toEqual({ delivered: 0, failed: 0, refused: 0, disabled: 0 })

    // a sandbox note is Done at once: one event for each endpoint
    const up = await dev.call('POST', '/v1/uploads', { token: sandbox, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })
    expect((await dev.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: sandbox })).status).toBe(202)
    expect(await dev.services.webhooks.deliverDue('test-sender')).toBe(2)
    expect([broken.got, gone.got]).toEqual([1, 1])
    expect(moved(before.deliveries, (await scrape(dev)).deliveries)).toEqual({ delivered: 0, failed: 1, refused: 0, disabled: 1 })

    // the retry of the 500 fails again; the endpoint that answered 410 is disabled and gets nothing more
    clock.advance(FIRST_RETRY_MS)
    expect(await dev.services.webhooks.deliverDue('test-sender')).toBe(1)
    expect([broken.got, gone.got]).toEqual([2, 1])
    const afterRetry = await scrape(dev)
    // fails if a retry were not counted, or counted under another outcome
    expect(moved(before.deliveries, afterRetry.deliveries)).toEqual({ delivered: 0, failed: 2, refused: 0, disabled: 1 })

    // The operator turns the development setting off: a process on the same database without
    // NOTESVC_ALLOW_PRIVATE_URLS refuses the http loopback endpoint at its next attempt, sending nothing.
    const strict = createTestApp({ clock: fixedClock(new Date(clock.now().getTime() + 60_000)), store, env: LIMITS })
    const strictBefore = await scrape(strict)
    expect(await strict.services.webhooks.deliverDue('strict-sender')).toBe(1)
    expect(broken.got).toBe(2)
    expect(moved(strictBefore.deliveries, (await scrape(strict)).deliveries)).toEqual({ delivered: 0, failed: 0, refused: 1, disabled: 0 })
    // each process counts its own attempts: the first one's counters stood still
    expect((await scrape(dev)).deliveries).toEqual(afterRetry.deliveries)
    // what the owner sees of the same attempts: the deliveries of the endpoint, newest first
    const hooks = (await dev.call('GET', '/v1/webhooks', { token: sandbox })).body.data as { id: string; url: string }[]
    const brokenId = hooks.find(h => h.url === broken.url)!.id
    const seen = (await dev.call('GET', `/v1/webhooks/${brokenId}/deliveries`, { token: sandbox })).body.data as { status: string; responseCode: number | null }[]
    expect(seen.map(d => [d.status, d.responseCode])).toEqual([['refused', null], ['failed', 500], ['failed', 500]])
  })

  test('an upload whose file is not audio fails for good: notesvc_jobs_total{outcome="failed"} moves by one, nothing else', async () => {
    const t = createTestApp({ store: await open(), env: { ...LIMITS, NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off' } })
    const key = await t.key()
    const before = await scrape(t)
    expect(before.jobs).toEqual({ done: 0, failed: 0, retried: 0, taken_over: 0 })
    const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'broken.mp3', contentType: 'audio/mpeg' } })
    const put = await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: makeWav({ seconds: 1 }) as BodyInit }))
    expect(put.status).toBe(200)
    expect((await t.call('POST', `/v1/uploads/${up.body.noteId}/complete`, { token: key })).status).toBe(202)
    // a file that is not audio is refused at completion (it is decoded before the charge), so the stored
    // recording is damaged after it: the job then cannot read it
    await Bun.write((await t.services.storage.localCopy(`uploads/${up.body.noteId}`)).path, crypto.getRandomValues(new Uint8Array(4096)))
    await t.services.workers.start()
    try {
      await until('the job ended', async () => ['done', 'failed'].includes((await t.services.jobs.latestForNote(up.body.noteId))?.status ?? ''), 30_000)
    } finally {
      await t.services.workers.stop()
    }
    const note = (await t.call('GET', `/v1/notes/${up.body.noteId}/status`, { token: key })).body
    expect([note.status, note.errorCode]).toEqual(['Error', 'media_unreadable'])
    // fails if a permanent failure were counted as retried (or not at all)
    expect(moved(before.jobs, (await scrape(t)).jobs)).toEqual({ done: 0, failed: 1, retried: 0, taken_over: 0 })
  })
})
