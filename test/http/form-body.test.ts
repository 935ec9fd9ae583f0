/**
 * The forms that routes read themselves (src/http/form-body.ts: the pages' forms, OAuth's endpoints)
 * refuse text the database cannot hold, as the JSON routes do (src/http/text-check.ts): a NUL (U+0000)
 * in a field was a 500 on PostgreSQL (`invalid byte sequence for encoding "UTF8": 0x00`). On both back
 * ends, the same answer: 400 naming the field, in the envelope for the pages and in OAuth's error
 * format for OAuth; and text the database can hold goes through.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Store } from '../../src/db/store'
import { createTestApp } from '../helpers/app'
import { backEnds } from '../helpers/backends'
import { cookieBrowser, field } from '../helpers/web'

const NUL = '\u0000'
const EMAIL = 'forms@example.com'
const PASSWORD = 'a long enough password'
const REDIRECT = 'http://127.0.0.1:9999/callback'

for (const b of backEnds) describe.skipIf(b.skip)(`forms with text the database cannot hold, on ${b.name}`, () => {
  let store: Store
  let t: ReturnType<typeof createTestApp>
  beforeAll(async () => {
    store = await b.open()
    t = createTestApp({ store })
    await t.services.web.setPassword(EMAIL, PASSWORD)
  }, 60_000)
  afterAll(async () => {
    await store?.close()
  })

  const send = (request: Request) => t.app.handle(request)
  const envelopeOf = (r: { status: number; text: string }) => ({ status: r.status, code: JSON.parse(r.text).error?.code, fields: (JSON.parse(r.text).error?.details ?? []).map((d: { field: string }) => d.field) })

  test('sign-in: a NUL in the email or the password is 400 naming the field; the real sign-in still works', async () => {
    const browser = cookieBrowser('http://localhost', send)
    const page = await browser.get('/signin')
    const csrf = field(page.text, 'csrf')!
    const email = await browser.post('/signin', { csrf, next: '/settings', email: `forms${NUL}@example.com`, password: PASSWORD }, { origin: 'http://localhost' })
    expect(envelopeOf(email)).toEqual({ status: 400, code: 'invalid_request', fields: ['email'] })
    const password = await browser.post('/signin', { csrf, next: '/settings', email: EMAIL, password: `pass${NUL}` }, { origin: 'http://localhost' })
    expect(envelopeOf(password)).toEqual({ status: 400, code: 'invalid_request', fields: ['password'] })
    const ok = await browser.post('/signin', { csrf, next: '/settings', email: EMAIL, password: PASSWORD }, { origin: 'http://localhost' })
    expect([ok.status, ok.location]).toEqual([303, '/settings'])

    // signed in: a key named with a NUL is refused, one named with other control characters is made
    const settings = await browser.get('/settings')
    const token = field(settings.text, 'csrf')!
    const key = await browser.post('/settings/keys', { csrf: token, library: 'live', scopes: ['notes:read'], name: `laptop${NUL}` }, { origin: 'http://localhost' })
    expect(envelopeOf(key)).toEqual({ status: 400, code: 'invalid_request', fields: ['name'] })
    const made = await browser.post('/settings/keys', { csrf: token, library: 'live', scopes: ['notes:read'], name: 'laptop\ttab \ufffd' }, { origin: 'http://localhost' })
    expect(made.status).toBe(200)
    expect(made.text).toContain('laptop\ttab \ufffd')
  })

  test('OAuth: registration, token and authorization requests with a NUL are 400, in OAuth’s format', async () => {
    const oauth = (path: string, body: string, type: string) => send(new Request(`http://localhost${path}`, { method: 'POST', headers: { 'content-type': type }, body }))
    const register = await oauth('/oauth/register', JSON.stringify({ client_name: `app${NUL}`, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }), 'application/json')
    expect(register.status).toBe(400)
    expect(await register.json()).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringContaining('client_name') })

    const token = await oauth('/oauth/token', new URLSearchParams({ grant_type: 'authorization_code', client_id: `cli_${NUL}`, code: 'x', code_verifier: 'y', redirect_uri: REDIRECT }).toString(), 'application/x-www-form-urlencoded')
    expect(token.status).toBe(400)
    expect(await token.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('client_id') })

    const revoke = await oauth('/oauth/revoke', new URLSearchParams({ token: `t${NUL}`, client_id: 'cli_x' }).toString(), 'application/x-www-form-urlencoded')
    expect(revoke.status).toBe(400)
    expect(await revoke.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('token') })

    const authorize = await send(new Request(`http://localhost/oauth/authorize?client_id=cli_${encodeURIComponent(NUL)}&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}`))
    expect(authorize.status).toBe(400)
    expect(authorize.headers.get('content-type')).toContain('text/html')
    expect(await authorize.text()).toContain('client_id')

    // and the same registration without the NUL is made
    const made = await oauth('/oauth/register', JSON.stringify({ client_name: 'app\ttab', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }), 'application/json')
    expect(made.status).toBe(201)
  })
})
