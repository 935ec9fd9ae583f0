/**
 * The security headers on every family of answers (src/http/security-headers.ts), one row per route
 * family: every answer `X-Content-Type-Options: nosniff`; the API's JSON (successes, error envelopes,
 * 404 and 405, the kept first page, an escaped error), MCP, OAuth's JSON and the pages never stored
 * (`Cache-Control: no-store`: transcripts are private); every HTML page a Content-Security-Policy and
 * `X-Frame-Options: DENY`, and the pages with forms (sign-in, settings, OAuth's consent) no inline
 * style (their stylesheets served from this server). Issue 29 finding 8.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { listen, type Fetching } from '../../src/http/listen'
import { createTestApp } from '../helpers/app'
import { makeWav } from '../fixtures/wav'

const METRICS_TOKEN = 'metrics-token-for-the-test-0123456789'
const REDIRECT = 'http://127.0.0.1:8765/callback'

/** What each family of answers must carry; `undefined`: not asserted for that family (assets keep their caching). */
const EXPECTED = {
  api: { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' },
  page: { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', 'x-frame-options': 'DENY' },
  asset: { 'x-content-type-options': 'nosniff' },
  media: { 'x-content-type-options': 'nosniff' },
} as const
type Family = keyof typeof EXPECTED

interface Row {
  name: string
  family: Family
  /** the request; `served` rows go through a real server (the kept first page, an escaped error) */
  send: () => Promise<Response>
  status: number
}

let t: ReturnType<typeof createTestApp>
let server: Server<unknown>
let rows: Row[] = []

beforeAll(async () => {
  t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=10000,write=10000,processing=10000', NOTESVC_METRICS_TOKEN: METRICS_TOKEN } })
  const key = await t.key()
  const auth = { authorization: `Bearer ${key}` }
  const account = await t.services.accounts.ensureAccount('user@example.com')
  const session = await t.services.web.sessions.create(account.id)
  const cookie = { cookie: session.setCookie.split(';')[0]! }
  const handle = (path: string, init: RequestInit = {}) => t.app.handle(new Request(`http://localhost${path}`, init))

  const note = await (await handle('/v1/notes', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Headers', content: 'Private words.' }) })).json() as { id: string }
  const upload = await (await handle('/v1/uploads', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ fileName: 'a.wav', contentType: 'audio/wav' }) })).json() as { noteId: string; uploadUrl: string; headers: Record<string, string> }
  const uploadPath = new URL(upload.uploadUrl).pathname + new URL(upload.uploadUrl).search
  const client = await (await handle('/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Headers', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) })).json() as { client_id: string }
  const authorize = `/oauth/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's', scope: 'notes:read', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`

  // a real server for what only it answers: the kept first page, and an error that escapes the app
  const app = t.app as unknown as Fetching
  const kept = app.answerAtOnce!
  app.answerAtOnce = request => {
    if (new URL(request.url).pathname === '/v1/escape') throw new Error('planted')
    return kept(request)
  }
  server = listen(app, { port: 0, hostname: '127.0.0.1' })
  const base = `http://127.0.0.1:${server.port}`
  for (let i = 0; i < 3; i++) await (await fetch(`${base}/v1/notes`, { headers: auth })).arrayBuffer() // kept now

  const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } })
  rows = [
    { name: 'listNotes, routed', family: 'api', status: 200, send: () => handle('/v1/notes', { headers: auth }) },
    { name: 'listNotes, the kept first page', family: 'api', status: 200, send: () => fetch(`${base}/v1/notes`, { headers: auth }) },
    { name: 'getNote', family: 'api', status: 200, send: () => handle(`/v1/notes/${note.id}`, { headers: auth }) },
    { name: 'createFolder', family: 'api', status: 201, send: () => handle('/v1/folders', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Inbox"}' }) },
    { name: 'getHealth', family: 'api', status: 200, send: () => handle('/v1/health') },
    { name: 'the OpenAPI document', family: 'api', status: 200, send: () => handle('/v1/openapi.json') },
    { name: 'a 401 envelope', family: 'api', status: 401, send: () => handle('/v1/notes') },
    { name: 'a 400 envelope', family: 'api', status: 400, send: () => handle('/v1/notes?limit=1000', { headers: auth }) },
    { name: 'a 404 envelope', family: 'api', status: 404, send: () => handle('/v1/nowhere') },
    { name: 'a 405 envelope', family: 'api', status: 405, send: () => handle('/v1/health', { method: 'DELETE' }) },
    { name: 'an escaped error', family: 'api', status: 500, send: () => fetch(`${base}/v1/escape`) },
    { name: 'the audit log export', family: 'api', status: 200, send: () => handle('/v1/audit-events/export', { headers: auth }) },
    { name: 'OpenAI-compatible transcription, refused', family: 'api', status: 400, send: () => handle('/v1/audio/transcriptions', { method: 'POST', headers: auth }) },
    { name: 'MCP', family: 'api', status: 200, send: () => handle('/mcp', { method: 'POST', headers: mcpHeaders, body: initialize }) },
    { name: 'OAuth token error', family: 'api', status: 400, send: () => handle('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=password' }) },
    { name: 'OAuth metadata', family: 'asset', status: 200, send: () => handle('/.well-known/oauth-authorization-server') },
    { name: 'metrics', family: 'api', status: 200, send: () => handle('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }) },
    { name: 'the upload’s PUT', family: 'media', status: 200, send: () => handle(uploadPath, { method: 'PUT', headers: upload.headers, body: Buffer.from(makeWav({ seconds: 1 })) }) },
    { name: 'a note’s recording', family: 'media', status: 200, send: () => handle(`/notes/${upload.noteId}/media`, { headers: cookie }) },
    { name: '/docs', family: 'page', status: 200, send: () => handle('/docs') },
    { name: '/docs/errors', family: 'page', status: 200, send: () => handle('/docs/errors') },
    { name: '/signin', family: 'page', status: 200, send: () => handle('/signin') },
    { name: '/settings', family: 'page', status: 200, send: () => handle('/settings', { headers: cookie }) },
    { name: 'the library', family: 'page', status: 200, send: () => handle('/', { headers: cookie }) },
    { name: 'a note’s page', family: 'page', status: 200, send: () => handle(`/notes/${note.id}`, { headers: cookie }) },
    { name: 'OAuth consent', family: 'page', status: 200, send: () => handle(authorize, { headers: cookie }) },
    { name: 'OAuth error page', family: 'page', status: 400, send: () => handle('/oauth/authorize?client_id=nobody') },
    { name: 'the pages’ stylesheet', family: 'asset', status: 200, send: () => handle('/assets/pages.css') },
    { name: 'OAuth’s stylesheet', family: 'asset', status: 200, send: () => handle('/assets/oauth.css') },
    { name: 'the library’s stylesheet', family: 'asset', status: 200, send: () => handle('/assets/library.css') },
    { name: 'the docs page’s script', family: 'asset', status: 200, send: () => handle('/docs/scalar.js') },
  ]
})

afterAll(() => server?.stop(true))

describe('the security headers of every route family', () => {
  test('each answer carries its family’s headers', async () => {
    const wrong: string[] = []
    for (const row of rows) {
      const res = await row.send()
      await res.arrayBuffer()
      const got = Object.fromEntries(Object.keys(EXPECTED[row.family]).map(h => [h, res.headers.get(h)]))
      if (res.status !== row.status || JSON.stringify(got) !== JSON.stringify(EXPECTED[row.family])) wrong.push(`${row.name}: ${res.status} ${JSON.stringify(got)}`)
      if (row.family === 'page' && !res.headers.get('content-security-policy')?.includes("frame-ancestors 'none'")) wrong.push(`${row.name}: CSP ${res.headers.get('content-security-policy')}`)
    }
    expect(wrong).toEqual([])
  })

  test('the pages with forms take no inline style: their CSP allows only this server’s stylesheet, which they link', async () => {
    const forms = rows.filter(r => ['/signin', '/settings', 'OAuth consent', 'OAuth error page'].includes(r.name))
    expect(forms).toHaveLength(4)
    for (const row of forms) {
      const res = await row.send()
      const html = await res.text()
      const csp = res.headers.get('content-security-policy')!
      expect({ page: row.name, styleSrc: /style-src ([^;]+)/.exec(csp)?.[1] }).toEqual({ page: row.name, styleSrc: "'self'" })
      expect({ page: row.name, inline: /<style|\sstyle="/.test(html) }).toEqual({ page: row.name, inline: false })
      const href = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1]
      const sheet = await t.app.handle(new Request(`http://localhost${href}`))
      expect({ page: row.name, status: sheet.status, type: sheet.headers.get('content-type') }).toEqual({ page: row.name, status: 200, type: 'text/css; charset=utf-8' })
      expect((await sheet.text()).length).toBeGreaterThan(200)
    }
  })
})
