import { describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock } from '../helpers/app'

/** The error envelope, request ids, 404/405, and rate limiting (SPEC "Errors", "Rate limits"; DECISIONS "Errors and HTTP"). */

describe('unknown path → 404 not_found', async () => {
  const app = createTestApp()
  const token = await app.key()
  test.each([
    ['GET', '/v1/nope'],
    ['GET', '/nothing'],
    ['POST', '/v1/notes/note_x/nonsense'],
    ['DELETE', '/v2/notes'],
  ])('%s %s', async (method, path) => {
    expectEnvelope(await app.call(method, path), 404, 'not_found')
    expectEnvelope(await app.call(method, path, { token }), 404, 'not_found')
  })
})

describe('known path, unserved method → 405 method_not_allowed with Allow', async () => {
  const app = createTestApp()
  const token = await app.key()
  const rows: [string, string, string[]][] = [
    ['PUT', '/v1/notes', ['GET', 'POST']],
    ['DELETE', '/v1/folders', ['GET', 'POST']],
    ['POST', '/v1/health', ['GET']],
    ['PATCH', '/v1/usage', ['GET']],
    ['PUT', '/v1/notes/note_missing', ['GET', 'PATCH', 'DELETE']],
    ['GET', '/v1/summaries', ['POST']],
  ]
  test.each(rows)('%s %s → Allow lists %p', async (method, path, served) => {
    const res = await app.call(method, path, { token })
    expectEnvelope(res, 405, 'method_not_allowed')
    const allow = (res.headers.get('allow') ?? '').split(',').map(m => m.trim())
    for (const m of served) expect(allow).toContain(m)
    expect(allow).not.toContain(method)
  })
})

describe('bad requests', async () => {
  const app = createTestApp()
  const token = await app.key()

  test('malformed JSON on POST /v1/notes with a valid key → 400 invalid_request', async () => {
    const res = await app.call('POST', '/v1/notes', { token, body: '{"title": "a", ', headers: { 'content-type': 'application/json' } })
    expectEnvelope(res, 400, 'invalid_request')
  })

  test('a validation failure lists each field at fault in details, with field and issue', async () => {
    const res = await app.call('POST', '/v1/notes', { token, body: { title: 7 } })
    expectEnvelope(res, 400, 'invalid_request')
    const details: { field: string; issue: string }[] = res.body.error.details
    expect(details).toBeArray()
    for (const d of details) {
      expect(d.field).toBeString()
      expect(d.issue).toBeString()
      expect(d.issue.length).toBeGreaterThan(0)
    }
    const fields = details.map(d => d.field)
    expect(fields).toContain('title')
    expect(fields).toContain('content')
  })

  test('an unknown field in the body is refused, naming it', async () => {
    const res = await app.call('POST', '/v1/folders', { token, body: { name: 'Work', colour: 'red' } })
    expectEnvelope(res, 400, 'invalid_request')
    expect(JSON.stringify(res.body.error.details)).toContain('colour')
  })
})

describe('unexpected exception → 500 internal_error without internals', async () => {
  const SECRET = 'SECRET-DB-PATH /var/x'
  const app = createTestApp({ alter: s => { s.notes.listJson = () => { throw new Error(SECRET) } } })
  const token = await app.key()

  test('GET /v1/notes whose service throws', async () => {
    const res = await app.call('GET', '/v1/notes', { token })
    expectEnvelope(res, 500, 'internal_error')
    expect(res.text).not.toContain('SECRET-DB-PATH')
    expect(res.text).not.toContain('/var/x')
    expect(res.text).not.toMatch(/\bat .*\(.*:\d+:\d+\)|\.ts:\d+/)
    // The request id is quoted so the operator can find the logged cause.
    expect(res.body.error.message).toContain(res.headers.get('x-request-id')!)
  })

  test('other routes of the same app keep working', async () => {
    expect((await app.call('GET', '/v1/folders', { token })).status).toBe(200)
  })
})

describe('X-Request-Id', () => {
  test('every response carries one, unique per request, and error bodies repeat it', async () => {
    const app = createTestApp({ alter: s => { s.folders.list = () => { throw new Error('boom') } } })
    const token = await app.key()
    const requests: [string, string, { token?: string; body?: unknown }, number][] = [
      ['GET', '/v1/health', {}, 200],
      ['GET', '/v1', {}, 200],
      ['GET', '/v1/notes', { token }, 200],
      ['POST', '/v1/notes', { token, body: { title: 't', content: 'c' } }, 201],
      ['GET', '/v1/notes', {}, 401],
      ['GET', '/v1/notes/note_missing', { token }, 404],
      ['GET', '/v1/nope', {}, 404],
      ['PUT', '/v1/notes', { token }, 405],
      ['POST', '/v1/notes', { token, body: {} }, 400],
      ['GET', '/v1/folders', { token }, 500],
      ['GET', '/v1/health', {}, 200],
    ]
    const ids: string[] = []
    for (const [method, path, o, status] of requests) {
      const res = await app.call(method, path, o)
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${status}`)
      const id = res.headers.get('x-request-id')
      expect(id).toMatch(/^\S+$/)
      ids.push(id!)
      if (status >= 400) expect(res.body.error.request_id).toBe(id!)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('X-RateLimit headers on credentialed responses', async () => {
  const app = createTestApp()
  const token = await app.key()
  const limited = await app.key({ scopes: ['usage:read'] })
  const rows: [string, string, string, { token: string; body?: unknown }, number, number][] = [
    ['read success', 'GET', '/v1/notes', { token }, 200, 120],
    ['write success', 'POST', '/v1/folders', { token, body: { name: 'Work' } }, 201, 30],
    ['read not found', 'GET', '/v1/notes/note_missing', { token }, 404, 120],
    ['write validation failure', 'POST', '/v1/notes', { token, body: {} }, 400, 30],
    ['missing scope', 'GET', '/v1/notes', { token: limited }, 403, 120],
    ['processing, live key', 'POST', '/v1/summaries', { token, body: { text: 'hello' } }, 200, 10],
  ]
  test.each(rows)('%s (%s %s → %d)', async (_name, method, path, o, status, limit) => {
    const res = await app.call(method, path, o)
    expect(res.status).toBe(status)
    expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit))
    const remaining = Number(res.headers.get('x-ratelimit-remaining'))
    expect(Number.isInteger(remaining) && remaining >= 0 && remaining < limit).toBe(true)
    const reset = Number(res.headers.get('x-ratelimit-reset'))
    expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true)
  })

  test('Remaining counts down with each request of the class', async () => {
    const fresh = await app.key()
    const a = await app.call('GET', '/v1/notes', { token: fresh })
    const b = await app.call('GET', '/v1/folders', { token: fresh })
    expect(a.headers.get('x-ratelimit-remaining')).toBe('119')
    expect(b.headers.get('x-ratelimit-remaining')).toBe('118')
  })
})

describe('rate limiting (read=3, write=2, processing=1)', () => {
  const env = { NOTESVC_RATE_LIMITS: 'read=3,write=2,processing=1' }

  test('the 4th read with one key → 429 rate_limited with Retry-After; another key still gets 200', async () => {
    const app = createTestApp({ env })
    const a = await app.key()
    const b = await app.key()
    for (let i = 0; i < 3; i++) expect((await app.call('GET', '/v1/notes', { token: a })).status).toBe(200)
    const res = await app.call('GET', '/v1/folders', { token: a })
    expectEnvelope(res, 429, 'rate_limited')
    const retryAfter = Number(res.headers.get('retry-after'))
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true)
    expect(res.body.error.retry_after_seconds).toBe(retryAfter)
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0')

    expect((await app.call('GET', '/v1/notes', { token: b })).status).toBe(200)
  })

  test('write is counted separately from read', async () => {
    const app = createTestApp({ env })
    const token = await app.key()
    for (let i = 0; i < 3; i++) expect((await app.call('GET', '/v1/notes', { token })).status).toBe(200)
    expect((await app.call('GET', '/v1/notes', { token })).status).toBe(429)
    // Reads exhausted, writes untouched.
    expect((await app.call('POST', '/v1/folders', { token, body: { name: 'A' } })).status).toBe(201)
    expect((await app.call('POST', '/v1/folders', { token, body: { name: 'B' } })).status).toBe(201)
    expectEnvelope(await app.call('POST', '/v1/folders', { token, body: { name: 'C' } }), 429, 'rate_limited')
  })

  test('processing is counted separately from read and write', async () => {
    const app = createTestApp({ env })
    const token = await app.key({ sandbox: true })
    expect((await app.call('POST', '/v1/summaries', { token, body: { text: 'hello' } })).status).toBe(200)
    expectEnvelope(await app.call('POST', '/v1/summaries', { token, body: { text: 'hello' } }), 429, 'rate_limited')
    expect((await app.call('POST', '/v1/folders', { token, body: { name: 'A' } })).status).toBe(201)
    expect((await app.call('GET', '/v1/notes', { token })).status).toBe(200)
  })

  test('Retry-After counts down, and the limit lifts when the 60-second window ends', async () => {
    const clock = fixedClock('2026-11-22T10:00:00.000Z')
    const app = createTestApp({ env, clock })
    const token = await app.key()
    for (let i = 0; i < 3; i++) await app.call('GET', '/v1/notes', { token })
    const refused = await app.call('GET', '/v1/notes', { token })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('60')
    clock.advance(30_000)
    const later = await app.call('GET', '/v1/notes', { token })
    expect(later.status).toBe(429)
    expect(later.headers.get('retry-after')).toBe('30')
    clock.advance(30_000)
    const res = await app.call('GET', '/v1/notes', { token })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-ratelimit-remaining')).toBe('2')
  })

  test('public routes are limited per client address, not refused for lack of a credential', async () => {
    const app = createTestApp({ env, clock: fixedClock('2026-01-01T00:00:00.000Z') })
    for (let i = 0; i < 3; i++) expect((await app.call('GET', '/v1/health')).status).toBe(200)
    const res = await app.call('GET', '/v1/health')
    expectEnvelope(res, 429, 'rate_limited')
    // all at one instant: the whole 60-second window is left to wait
    expect(res.headers.get('retry-after')).toBe('60')
    // A credential's own budget is separate from the address's.
    expect((await app.call('GET', '/v1/notes', { token: await app.key() })).status).toBe(200)
  })
})
