/**
 * An error that escapes the application (src/http/escaped-error.ts, answered by src/http/listen.ts,
 * the one place every answer leaves): on a real loopback server, the envelope's 500 in JSON with a
 * request id, never Bun's HTML page with source lines and file paths; logged, counted in GET /metrics
 * and written to the access log like any other answer. Thrown by the answer made before routing, by
 * the application's fetch, or as a rejected promise.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { escapedErrorAnswer } from '../../src/http/escaped-error'
import { listen, type Fetching } from '../../src/http/listen'
import { createLogger } from '../../src/log'
import { createTestApp } from '../helpers/app'

const TOKEN = 'metrics-token-for-the-test-0123456789'

let server: Server<unknown> | null = null
afterEach(() => {
  server?.stop(true)
  server = null
})

/** A real app (metrics and access log on) served on loopback, its answer made before routing replaced by `answerAtOnce`. */
function servedApp(answerAtOnce: (request: Request) => Response | undefined) {
  const lines: string[] = []
  const t = createTestApp({
    env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', NOTESVC_METRICS_TOKEN: TOKEN, NOTESVC_ACCESS_LOG: '1' },
    log: createLogger('info', l => lines.push(l)),
  })
  const app = t.app as unknown as Fetching
  app.answerAtOnce = answerAtOnce
  server = listen(app, { port: 0, hostname: '127.0.0.1' })
  const base = `http://127.0.0.1:${server.port}`
  const logged = () => lines.map(l => JSON.parse(l) as Record<string, unknown>)
  return { t, base, logged }
}

/** The answer as a client sees it. */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers })
  const text = await res.text()
  return { status: res.status, type: res.headers.get('content-type'), requestId: res.headers.get('x-request-id'), text }
}

function expectEnvelope500(a: Awaited<ReturnType<typeof get>>) {
  expect(a.status).toBe(500)
  expect(a.type).toBe('application/json; charset=utf-8')
  expect(a.text).not.toContain('<')
  expect(a.text).not.toContain('/work/')
  expect(a.text).not.toContain('.ts')
  const body = JSON.parse(a.text) as { error: Record<string, unknown> }
  expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'internal_error', doc_url: 'http://localhost/docs/errors#internal_error' })
  expect(a.requestId).toMatch(/^req_[0-9a-f-]{36}$/)
  expect(body.error.request_id).toBe(a.requestId!)
  expect(body.error.message).toContain(a.requestId!)
}

describe('an error thrown where no handler catches it', () => {
  test('inside the answer made before routing: the envelope’s 500, logged, counted and in the access log', async () => {
    const { base, logged } = servedApp(request => {
      if (new URL(request.url).pathname === '/v1/notes') throw new TypeError('planted: the kept page broke at /secret/path.ts:1')
      return undefined
    })
    const a = await get(`${base}/v1/notes?speaker=Maria`)
    expectEnvelope500(a)
    expect(a.text).not.toContain('planted')
    expect(a.text).not.toContain('Maria')

    const errors = logged().filter(l => l.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ msg: 'unhandled error', requestId: a.requestId, method: 'GET', path: '/v1/notes' })
    expect((errors[0]!.error as { message: string }).message).toContain('planted')
    expect(JSON.stringify(errors[0])).not.toContain('Maria') // the query stays out of the log
    expect(logged().filter(l => l.msg === 'request' && l.requestId === a.requestId)).toEqual([
      expect.objectContaining({ method: 'GET', route: '*', status: 500 }),
    ])

    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const family = parsePrometheusTextFormat(await metrics.text()).find(f => f.name === 'notesvc_http_requests_total')
    const failures = family?.metrics.filter(m => m.labels?.status === '500') ?? []
    expect(failures.map(m => [m.labels!.operation, Number(m.value)])).toEqual([['unmatched', 1]])
  })

  test('the server keeps answering after it', async () => {
    let thrown = 0
    const { t, base } = servedApp(() => {
      if (thrown++ === 0) throw new Error('planted once')
      return undefined
    })
    expectEnvelope500(await get(`${base}/v1/health`))
    const key = await t.key()
    expect((await get(`${base}/v1/notes`, { authorization: `Bearer ${key}` })).status).toBe(200)
  })
})

describe('the application itself failing', () => {
  const cases: [string, Fetching['fetch']][] = [
    ['a synchronous throw from fetch', () => { throw new Error('planted sync') }],
    ['a rejected promise from fetch', () => Promise.reject(new Error('planted async'))],
  ]
  for (const [name, fetchThatFails] of cases) {
    test(`${name}: the envelope’s 500 in JSON, never HTML`, async () => {
      const lines: string[] = []
      const app: Fetching = {
        server: null,
        fetch: fetchThatFails,
        escaped: escapedErrorAnswer({ docsUrl: 'http://localhost/docs', log: createLogger('info', l => lines.push(l)) }),
      }
      server = listen(app, { port: 0, hostname: '127.0.0.1' })
      const a = await get(`http://127.0.0.1:${server.port}/v1/folders`)
      expectEnvelope500(a)
      expect(lines.map(l => JSON.parse(l).msg)).toEqual(['unhandled error'])
    })
  }
})
