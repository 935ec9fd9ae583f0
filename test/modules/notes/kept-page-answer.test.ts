/**
 * The kept first page answered before routing (src/modules/notes/kept-page-answer.ts), on a real loopback server: the
 * same answer as the route (status, body, headers, rate-limit count, access-log line), and every case
 * it must not answer left to the route, which answers it as always.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { rateHeadersOn } from '../../../src/http/admission'
import { listen, type Fetching } from '../../../src/http/listen'
import { createLogger } from '../../../src/log'
import { createTestApp } from '../../helpers/app'

type TestApp = ReturnType<typeof createTestApp>

let server: Server<unknown> | null = null
afterEach(() => {
  server?.stop(true)
  server = null
})

/** Serves the app; `early` counts the requests answered before routing. */
function serving(t: TestApp) {
  const app = t.app as unknown as Fetching
  const answer = app.answerAtOnce!
  const counts = { early: 0, ids: [] as string[] }
  app.answerAtOnce = request => {
    const r = answer(request)
    if (r) {
      counts.early++
      counts.ids.push(r.headers.get('x-request-id')!)
    }
    return r
  }
  server = listen(app, { port: 0, hostname: '127.0.0.1' })
  const base = `http://127.0.0.1:${server.port}`
  const get = async (path: string, token?: string, method = 'GET') => {
    const res = await fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} })
    const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id'))
    return { status: res.status, headers, requestId: res.headers.get('x-request-id'), body: await res.text() }
  }
  return { counts, get, app, answer }
}

async function withNotes(t: TestApp, n = 3) {
  const key = await t.key()
  const account = await t.services.accounts.ensureAccount('user@example.com')
  for (let i = 0; i < n; i++) await t.services.notes.create({ accountId: account.id, sandbox: false }, { title: `note ${i}`, content: 'text' })
  return { key, account }
}

describe('the kept first page answered before routing', () => {
  test('gives the route’s answer: status, body, headers, one count per request', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
    const { key } = await withNotes(t)
    const s = serving(t)
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await s.get('/v1/notes?limit=50', key))
    expect(s.counts.early).toBeGreaterThan(0) // the page is kept after the first requests
    expect(s.counts.early).toBeLessThan(6)
    const routed = answers[0]!
    expect(routed.status).toBe(200)
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(200)
      expect(a.body).toBe(routed.body)
      expect(a.headers).toEqual({ ...routed.headers, 'x-ratelimit-remaining': String(999 - i) })
      expect(a.requestId).toMatch(/^req_[0-9a-f-]{36}$/)
    }
    expect(new Set(answers.map(a => a.requestId)).size).toBe(6)
  })

  test('each query string and each key’s library gets its own page', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
    const { key } = await withNotes(t, 3)
    const sandbox = await t.key({ sandbox: true })
    const s = serving(t)
    const titles = async (path: string, token: string) => (JSON.parse((await s.get(path, token)).body) as { data: { title: string }[] }).data.map(n => n.title)
    for (let round = 0; round < 3; round++) {
      expect(await titles('/v1/notes?limit=1', key)).toEqual(['note 2'])
      expect(await titles('/v1/notes?limit=2', key)).toEqual(['note 2', 'note 1'])
      expect(await titles('/v1/notes?limit=2&offset=1', key)).toEqual(['note 1', 'note 0'])
      expect(await titles('/v1/notes', key)).toEqual(['note 2', 'note 1', 'note 0'])
      expect(await titles('/v1/notes?limit=2', sandbox)).toEqual([])
    }
    expect(s.counts.early).toBeGreaterThan(5)
  })

  test('a note changed (by this process or another connection) is on the next answer', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
    const { key } = await withNotes(t, 1)
    const s = serving(t)
    for (let i = 0; i < 3; i++) await s.get('/v1/notes', key)
    const early = s.counts.early
    await t.store.run("UPDATE notes SET title = 'renamed'")
    const after = JSON.parse((await s.get('/v1/notes', key)).body) as { data: { title: string }[] }
    expect(after.data.map(n => n.title)).toEqual(['renamed'])
    await s.get('/v1/notes', key)
    expect(s.counts.early).toBeGreaterThan(early)
  })

  test('leaves to the route what it must not answer, and the route answers it as always', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=12,write=1000,processing=1000' } })
    const { key } = await withNotes(t)
    const foldersOnly = await t.key({ scopes: ['folders:read'] })
    const s = serving(t)
    for (let i = 0; i < 3; i++) await s.get('/v1/notes', key) // kept now
    const early = s.counts.early
    expect((await s.get('/v1/notes')).status).toBe(401)
    expect((await s.get('/v1/notes', 'svc_live_unknown')).status).toBe(401)
    expect((await s.get('/v1/notes', foldersOnly)).status).toBe(403)
    expect((await s.get('/v1/notes?limit=1000', key)).status).toBe(400)
    expect((await s.get('/v1/notes?limit=abc', key)).status).toBe(400)
    expect((await s.get('/v1/notes', key, 'HEAD')).status).toBe(200)
    expect((await s.get('/v1/notes/', key)).status).toBe(200)
    expect((await s.get('/v1/notes?q=note', key)).status).toBe(200)
    expect(s.counts.early).toBe(early)
    // the read limit (12) runs out: the early answers stop before it, and the route gives the 429
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await s.get('/v1/notes', key)).status)
    expect(statuses.filter(x => x === 429).length).toBeGreaterThan(0)
    const refused = await s.get('/v1/notes', key)
    expect(refused.status).toBe(429)
    expect(refused.headers['x-ratelimit-remaining']).toBe('0')
    expect(JSON.parse(refused.body).error.code).toBe('rate_limited')
  })

  test('a query the route refuses is refused each time it is sent, with the envelope, never a 500', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
    const { key } = await withNotes(t)
    const s = serving(t)
    for (let i = 0; i < 3; i++) await s.get('/v1/notes', key) // the key is cached, the page kept
    const early = s.counts.early
    // `speaker` filters a search: without `q` it is a 400 (listArgs), whether or not the key is cached
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await s.get('/v1/notes?speaker=A', key))
    expect(answers.map(a => [a.status, a.headers['content-type']])).toEqual(Array(3).fill([400, 'application/json; charset=utf-8']))
    for (const a of answers) expect(JSON.parse(a.body).error).toMatchObject({ code: 'invalid_request', details: [{ field: 'speaker', issue: 'sent without q' }] })
    expect(s.counts.early).toBe(early)
  })

  test('writes the access-log line of each answer, the same line as the route writes', async () => {
    const lines: string[] = []
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', NOTESVC_ACCESS_LOG: '1' }, log: createLogger('info', l => lines.push(l)) })
    const { key, account } = await withNotes(t, 1)
    const s = serving(t)
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await s.get('/v1/notes', key)).requestId!)
    await Bun.sleep(10)
    expect(s.counts.early).toBeGreaterThan(0)
    expect(s.counts.early).toBeLessThan(4)
    const logged = lines.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'request')
    // one line per request, early or routed, in the same shape
    expect(logged.map(l => l.requestId).sort()).toEqual([...ids].sort())
    const shape = (l: Record<string, unknown>) => [l.method, l.route, l.status, l.accountId, typeof l.credentialId, typeof l.durationMs]
    for (const l of logged) expect(shape(l)).toEqual(['GET', '/v1/notes', 200, account.id, 'string', 'number'])
    expect(new Set(logged.map(l => l.credentialId)).size).toBe(1)
    expect(s.counts.ids.every(id => ids.includes(id))).toBe(true)
  })
})

describe('rateHeadersOn', () => {
  test('writes every decision’s three values on the kept Headers, whichever changed', () => {
    const headers = new Headers()
    const set = rateHeadersOn(headers)
    const seen = [
      { limit: 120, remaining: 119, resetSeconds: 60, allowed: true },
      { limit: 120, remaining: 118, resetSeconds: 60, allowed: true },
      { limit: 120, remaining: 117, resetSeconds: 59, allowed: true },
      { limit: 30, remaining: 29, resetSeconds: 59, allowed: true },
    ].map(d => {
      set(d)
      return [headers.get('x-ratelimit-limit'), headers.get('x-ratelimit-remaining'), headers.get('x-ratelimit-reset')]
    })
    expect(seen).toEqual([['120', '119', '60'], ['120', '118', '60'], ['120', '117', '59'], ['30', '29', '59']])
  })
})
