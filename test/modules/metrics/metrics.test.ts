/**
 * GET /metrics (src/modules/metrics): the exposition, parsed with an independent parser of the
 * Prometheus text format (parse-prometheus-text-format, npm), moves by exactly what was done over a
 * real HTTP server on loopback: requests per operation and status (the kept first page included,
 * 404s and 401s too, never a path with an id), the upload queue read from the database, a processed
 * upload (jobs, engine seconds per audio second), a webhook delivered to a receiver on loopback. The
 * route is off (404) without NOTESVC_METRICS_TOKEN, answers 401 to a wrong token, and the token is no
 * API credential. On both back ends.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import type { Server } from 'bun'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { freePort, until } from '../../helpers/process'
import { recordingEngine } from '../../helpers/engines'
import { makeWav } from '../../fixtures/wav'
import { listen } from '../../../src/http/listen'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(60_000)

const TOKEN = 'metrics-token-for-the-test-0123456789'
const DEV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000', NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off' }

interface Sample { name: string; labels: Record<string, string>; value: number }

/**
 * The exposition as the parser reads it: each family's type, and every sample with its labels. The
 * parser (1.1.1) folds the series of a labelled histogram into one object without labels, so the
 * samples of histograms are read a second time with their families declared untyped, which it keeps
 * line by line (`_bucket`, `_sum`, `_count`, each with its labels).
 */
function exposition(text: string) {
  const families = parsePrometheusTextFormat(text)
  const types = new Map(families.map(f => [f.name, f.type]))
  const samples: Sample[] = parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))
    .flatMap(f => f.metrics.map(m => ({ name: f.name, labels: m.labels ?? {}, value: Number(m.value) })))
  /** the value of the sample with exactly these labels, or undefined */
  const value = (name: string, labels: Record<string, string> = {}): number | undefined => samples.find(s =>
    s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
  return { types, samples, value }
}
type Exposition = ReturnType<typeof exposition>

/** What each counted series moved by between two scrapes (absent before: 0). */
const moved = (before: Exposition, after: Exposition, name: string, labels: Record<string, string> = {}) => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0)

const servers: Server<unknown>[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true)
})

/** A webhook receiver on loopback that answers 200 and keeps what it got. */
function receiver() {
  const got: string[] = []
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, async fetch(req) { got.push(await req.text()); return new Response('ok') } })
  servers.push(server)
  return { url: `http://127.0.0.1:${server.port}/hooks`, got }
}

for (const b of backEnds) describe.skipIf(b.skip)(`GET /metrics on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** The app served on loopback as `serve` serves it (http/listen.ts: the kept first page answered before routing). */
  async function served(env: Record<string, string> = {}) {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const rec = recordingEngine()
    const t = createTestApp({ store: await open(), engines: { asr: () => rec.engine }, env: { ...DEV, NOTESVC_PUBLIC_URL: base, ...env } })
    servers.push(listen(t.app, { port, hostname: '127.0.0.1' }))
    const http = (method: string, path: string, o: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: BodyInit } = {}) =>
      fetch(path.startsWith('http') ? path : `${base}${path}`, {
        method,
        headers: { ...(o.token ? { authorization: `Bearer ${o.token}` } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
        body: o.raw ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
      })
    const scrape = async () => {
      const res = await http('GET', '/metrics', { token: TOKEN })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
      return exposition(await res.text())
    }
    return { t, http, scrape }
  }
  type Served = Awaited<ReturnType<typeof served>>

  test('the counters, histograms and gauges move by exactly what was done', async () => {
    const { t, http, scrape } = await served({ NOTESVC_METRICS_TOKEN: TOKEN })
    try {
      await countsWhatWasDone(t, http, scrape)
    } finally {
      // before the store closes (closingAfterEach)
      await t.services.workers.stop()
    }
  })

  async function countsWhatWasDone(t: Served['t'], http: Served['http'], scrape: Served['scrape']) {
    const key = await t.key()
    const before = await scrape()

    // requests: the first page three times (the second and third answered from the kept page where
    // the back end keeps one), a note that does not exist, a wrong key, a path that does not exist
    for (let i = 0; i < 3; i++) expect((await http('GET', '/v1/notes', { token: key })).status).toBe(200)
    expect((await http('GET', '/v1/notes/note_0000000000000000000000', { token: key })).status).toBe(404)
    expect((await http('GET', '/v1/notes', { token: 'svc_live_notakeynotakeynotakeynotakey' })).status).toBe(401)
    expect((await http('GET', '/v1/nowhere/note_0000000000000000000000')).status).toBe(404)

    // a webhook endpoint on loopback, and an upload completed while no worker runs: one job queued
    const hooks = receiver()
    expect((await http('POST', '/v1/webhooks', { token: key, body: { url: hooks.url, events: ['note.completed'] } })).status).toBe(201)
    const up = await (await http('POST', '/v1/uploads', { token: key, body: { fileName: 'memo.wav', contentType: 'audio/wav' } })).json() as { noteId: string; uploadUrl: string; headers: Record<string, string> }
    expect((await http('PUT', up.uploadUrl, { headers: up.headers, raw: makeWav({ seconds: 3 }) as unknown as BodyInit })).status).toBe(200)
    expect((await http('POST', `/v1/uploads/${up.noteId}/complete`, { token: key })).status).toBe(202)
    const queued = await scrape()
    expect(queued.value('notesvc_queue_jobs', { queue: 'upload_jobs', state: 'queued' })).toBe(1)
    expect(queued.value('notesvc_queue_jobs', { queue: 'upload_jobs', state: 'running' })).toBe(0)
    const age = queued.value('notesvc_queue_oldest_due_age_seconds', { queue: 'upload_jobs' })!
    expect(age).toBeGreaterThanOrEqual(0)
    expect(age).toBeLessThan(60)

    // the worker processes it, and the webhook sender delivers note.completed to the receiver
    await t.services.workers.start()
    await until('the job done', async () => (await t.services.jobs.latestForNote(up.noteId))?.status === 'done', 30_000)
    await until('the webhook delivered', () => hooks.got.length === 1, 30_000)
    await until('the delivery recorded', async () => (await scrape()).value('notesvc_webhook_deliveries_total', { outcome: 'delivered' }) === 1, 10_000)
    // the attempt is counted when the receiver answers; its outbox row ends in the sender's next write
    await until('the outbox row ended', async () => (await scrape()).value('notesvc_queue_jobs', { queue: 'webhook_outbox', state: 'running' }) === 0, 10_000)
    const after = await scrape()

    // every request counted once, under its operation id or route template, with its status; the
    // scrapes before this one are counted too (they are requests), as many as were made
    const scrapes = (after.value('notesvc_http_requests_total', { operation: '/metrics', status: '200' }) ?? 0) - (before.value('notesvc_http_requests_total', { operation: '/metrics', status: '200' }) ?? 0)
    expect(scrapes).toBeGreaterThanOrEqual(3)
    const expected: [string, string, number][] = [
      ['listNotes', '200', 3],
      ['getNote', '404', 1],
      ['listNotes', '401', 1],
      ['unmatched', '404', 1],
      ['createWebhook', '201', 1],
      ['createUpload', '201', 1],
      ['/v1/uploads/:id/file', '200', 1],
      ['completeUpload', '202', 1],
    ]
    for (const [operation, status, n] of expected) {
      const labels = { operation, status }
      expect([operation, status, moved(before, after, 'notesvc_http_requests_total', labels)]).toEqual([operation, status, n])
      // the histogram counted the same requests; its +Inf bucket holds them all, and buckets only grow
      expect([operation, status, moved(before, after, 'notesvc_http_request_duration_seconds_count', labels)]).toEqual([operation, status, n])
      expect(after.value('notesvc_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(after.value('notesvc_http_request_duration_seconds_count', labels)!)
      const buckets = after.samples.filter(s => s.name === 'notesvc_http_request_duration_seconds_bucket' && s.labels.operation === operation && s.labels.status === status).map(s => s.value)
      expect(buckets.length).toBe(14) // 13 bounds and +Inf
      expect(buckets).toEqual([...buckets].sort((x, y) => x - y))
      expect(moved(before, after, 'notesvc_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0)
    }
    // nothing else was asked: every other series stood still (but the scrapes and the status polls of none)
    const counted = after.samples.filter(s => s.name === 'notesvc_http_requests_total' && !expected.some(([o, st]) => s.labels.operation === o && s.labels.status === st) && s.labels.operation !== '/metrics')
    expect(counted.map(s => [s.labels.operation, s.labels.status, s.value - (before.value(s.name, s.labels) ?? 0)])).toEqual([])
    // no label holds a path with an id
    for (const s of after.samples) for (const v of Object.values(s.labels)) expect(v).not.toContain('note_')

    // the job: one done, nothing failed, retried or taken over; its engines timed against its 3 s
    expect(moved(before, after, 'notesvc_jobs_total', { outcome: 'done' })).toBe(1)
    for (const outcome of ['failed', 'retried', 'taken_over']) expect([outcome, moved(before, after, 'notesvc_jobs_total', { outcome })]).toEqual([outcome, 0])
    expect(moved(before, after, 'notesvc_engine_audio_seconds_total', { stage: 'asr', engine: 'recording' })).toBe(3)
    expect(moved(before, after, 'notesvc_engine_audio_seconds_total', { stage: 'summary', engine: 'builtin' })).toBe(3)
    expect(moved(before, after, 'notesvc_engine_seconds_total', { stage: 'asr', engine: 'recording' })).toBeGreaterThan(0)
    expect(moved(before, after, 'notesvc_engine_seconds_total', { stage: 'summary', engine: 'builtin' })).toBeGreaterThan(0)
    // diarization is off: no time of its own
    expect(after.samples.filter(s => s.labels.stage === 'diarization')).toEqual([])
    // the webhook: one delivered, no other outcome
    expect(moved(before, after, 'notesvc_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1)
    for (const outcome of ['failed', 'refused', 'disabled']) expect([outcome, moved(before, after, 'notesvc_webhook_deliveries_total', { outcome })]).toEqual([outcome, 0])
    // the queues are empty again
    for (const queue of ['upload_jobs', 'webhook_outbox']) {
      expect([queue, after.value('notesvc_queue_jobs', { queue, state: 'queued' }), after.value('notesvc_queue_jobs', { queue, state: 'running' }), after.value('notesvc_queue_oldest_due_age_seconds', { queue })]).toEqual([queue, 0, 0, 0])
    }
    // the database: its connections, none busy between requests
    expect(after.value('notesvc_db_connections_max')).toBe(b.name === 'postgres' ? 4 : 1)
    // a worker's claim (its poll for the next job) may be in its transaction at the moment of a scrape,
    // as CI saw once on PostgreSQL (Received: 1): what must hold is that none stays open
    await until('no transaction or query left open', async () => {
      const now = await scrape()
      return now.value('notesvc_db_transactions_open') === 0 && now.value('notesvc_db_queries_in_flight') === 0 ? true : undefined
    }, 5_000, 50)

    // the families' types as the exposition declares them, and the process's own metrics
    expect(Object.fromEntries(['notesvc_http_requests_total', 'notesvc_http_request_duration_seconds', 'notesvc_jobs_total', 'notesvc_engine_seconds_total', 'notesvc_engine_audio_seconds_total', 'notesvc_webhook_deliveries_total', 'notesvc_queue_jobs', 'notesvc_queue_oldest_due_age_seconds', 'notesvc_db_connections_max', 'notesvc_db_transactions_open', 'notesvc_db_queries_in_flight', 'process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds'].map(n => [n, after.types.get(n)]))).toEqual({
      notesvc_http_requests_total: 'COUNTER', notesvc_http_request_duration_seconds: 'HISTOGRAM', notesvc_jobs_total: 'COUNTER', notesvc_engine_seconds_total: 'COUNTER', notesvc_engine_audio_seconds_total: 'COUNTER',
      notesvc_webhook_deliveries_total: 'COUNTER', notesvc_queue_jobs: 'GAUGE', notesvc_queue_oldest_due_age_seconds: 'GAUGE', notesvc_db_connections_max: 'GAUGE', notesvc_db_transactions_open: 'GAUGE', notesvc_db_queries_in_flight: 'GAUGE',
      process_cpu_seconds_total: 'COUNTER', process_resident_memory_bytes: 'GAUGE', nodejs_eventloop_lag_p99_seconds: 'GAUGE',
    })
    expect(after.value('process_resident_memory_bytes')).toBeGreaterThan(0)
  }
})

describe('who may read GET /metrics', () => {
  test('without NOTESVC_METRICS_TOKEN the route answers 404 (envelope), whatever is sent', async () => {
    const t = createTestApp()
    const key = await t.key()
    for (const token of [undefined, key, TOKEN]) expectEnvelope(await t.call('GET', '/metrics', { token }), 404, 'not_found')
    expect((await t.call('GET', '/metrics')).body.error.message).toContain('NOTESVC_METRICS_TOKEN')
  })

  test('a missing or wrong token, or an API key, is refused with 401 (envelope); the token opens it', async () => {
    const t = createTestApp({ env: { NOTESVC_METRICS_TOKEN: TOKEN } })
    const key = await t.key()
    for (const token of [undefined, `${TOKEN}x`, TOKEN.slice(0, -1), key]) {
      const res = await t.call('GET', '/metrics', { token })
      expectEnvelope(res, 401, 'invalid_token')
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"')
      expect(res.body.error.message).toContain('NOTESVC_METRICS_TOKEN')
    }
    const ok = await t.call('GET', '/metrics', { token: TOKEN })
    expect(ok.status).toBe(200)
    expect(ok.text).toContain('# TYPE notesvc_http_requests_total counter')
  })

  test('the metrics token is no API credential: the API and the MCP endpoint refuse it with 401', async () => {
    const t = createTestApp({ env: { NOTESVC_METRICS_TOKEN: TOKEN } })
    for (const [method, path] of [['GET', '/v1/notes'], ['GET', '/v1/usage'], ['GET', '/v1/webhooks'], ['POST', '/v1/folders']] as const) {
      expectEnvelope(await t.call(method, path, { token: TOKEN, body: method === 'POST' ? { name: 'x' } : undefined }), 401, 'invalid_token')
    }
    const mcp = await t.call('POST', '/mcp', { token: TOKEN, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } })
    expect(mcp.status).toBe(401)
  })
})
