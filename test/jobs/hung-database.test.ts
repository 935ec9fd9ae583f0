import { afterAll, describe, expect, test } from 'bun:test'
import { startCluster, type Cluster } from '../helpers/cluster'
import { sharedPostgres } from '../helpers/backends'
import { postgresUnavailable } from '../helpers/postgres'
import { until } from '../helpers/process'
import { speechWav } from '../fixtures/speech'

/**
 * Job workers through a PostgreSQL server that hangs (issue 29, item 10b), for real: a `serve` (the
 * API alone) and a `notesvc worker` process, PocketSphinx transcribing real speech, the server's
 * processes stopped with SIGSTOP while the worker holds the job, for longer than its lease, then
 * resumed. Every statement gives up after NOTESVC_DATABASE_TIMEOUT_MS, so nothing waits on the hung
 * server: the API answers 503 meanwhile, the worker's heartbeats and writes fail and are logged, no
 * process dies, and once the server answers the job runs again after its lease and ends Done, charged
 * once and not refunded.
 */
const pgSkip = postgresUnavailable()
const LEASE_SECONDS = 3
const TIMEOUT_MS = 1500
/** the timeout, its grace, a new connection's own timeout and a slow machine's margin */
const BOUND_SECONDS = 10

let cluster: Cluster | null = null
afterAll(async () => {
  await cluster?.stop()
})

describe.skipIf(pgSkip !== null)('a worker process while PostgreSQL hangs', () => {
  test('the job survives a hang longer than its lease: no process dies, the job ends Done, charged once', async () => {
    const { pg } = await sharedPostgres()
    cluster = await startCluster({ backEnd: 'postgres', nodes: 1, workers: 1, leaseSeconds: LEASE_SECONDS, env: { NOTESVC_DATABASE_TIMEOUT_MS: String(TIMEOUT_MS), NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
    const [node] = cluster.nodes
    const [worker] = cluster.workers
    const key = (await cluster.cli(['keys', 'create', '--email', 'hang@example.com', '--plan', 'pro'])).stdout.trim()
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${node!.base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
      return { status: res.status, headers: res.headers, body: (await res.json()) as any }
    }
    const wav = speechWav(20)
    const up = (await call('POST', '/v1/uploads', { fileName: 'talk.wav', contentType: 'audio/wav', fileSize: wav.length })).body
    expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
    const done = await call('POST', `/v1/uploads/${up.noteId}/complete`)
    expect(done.status).toBe(202)
    await until('the worker transcribes', async () => (await call('GET', `/v1/notes/${up.noteId}/status`)).body.processingStage === 'transcribing', 30_000)

    pg.freeze()
    const frozenAt = performance.now()
    try {
      const started = performance.now()
      const during = await Promise.race([call('GET', `/v1/notes/${up.noteId}/status`), Bun.sleep(BOUND_SECONDS * 1000).then(() => null)])
      expect({ answeredWithinBound: during !== null, seconds: Math.round((performance.now() - started) / 1000) <= BOUND_SECONDS }).toEqual({ answeredWithinBound: true, seconds: true })
      expect([during!.status, during!.body.error.code, during!.headers.get('retry-after')]).toEqual([503, 'service_unavailable', '5'])
      // longer than the lease: the worker's heartbeats fail meanwhile
      const rest = 2 * LEASE_SECONDS * 1000 - (performance.now() - frozenAt)
      if (rest > 0) await Bun.sleep(rest)
    } finally {
      pg.thaw()
    }

    const end = await until('the note ends', async () => {
      const s = await call('GET', `/v1/notes/${up.noteId}/status`)
      return s.status === 200 && s.body.status !== 'Summarizing' ? s.body : null
    }, 90_000, 200)
    expect({ status: end.status, errorCode: end.errorCode }).toEqual({ status: 'Done', errorCode: null })
    for (const p of [node!, worker!]) expect({ name: p.name, exitCode: p.proc.exitCode, signal: p.proc.signalCode }).toEqual({ name: p.name, exitCode: null, signal: null })
    // the worker saw the hang and said so, and went on
    expect(worker!.lines.filter(l => l.level === 'warn' || l.level === 'error').map(l => l.msg).join('\n')).toMatch(/heartbeat failed|could not|job failed, will retry|no longer held/)
    const usage = (await call('GET', '/v1/usage')).body
    expect(usage.recent.map((u: { operation: string; credits: number }) => [u.operation, u.credits])).toEqual([['completeUpload', done.body.creditsCharged]])
    expect((await call('GET', `/v1/notes/${up.noteId}`)).body.originalTranscription.split(' ').length).toBeGreaterThan(10)
  }, 180_000)
})
