import { describe, expect, test } from 'bun:test'
import { createWebTestApp, field, signedIn, webAppWithPassword } from '../../helpers/web'
import { oauthApp, oauth, REDIRECT } from '../../helpers/oauth'

/**
 * Every state-changing form checks `Origin`, when the browser sends one, against the public URL
 * (NOTESVC_PUBLIC_URL, http://localhost in these apps), as a second line behind its CSRF token: a valid
 * token posted from another site, or from an opaque origin (`Origin: null`), is refused with 403 and
 * changes nothing.
 */

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'
const FOREIGN_ORIGINS = ['https://evil.example', 'null', 'http://localhost:8081', 'https://localhost']
const OWN_ORIGIN = 'http://localhost'

const keyCount = (t: ReturnType<typeof createWebTestApp>) => (t.db.query('SELECT count(*) AS n FROM api_keys').get() as { n: number }).n

describe('settings forms', () => {
  for (const origin of FOREIGN_ORIGINS) {
    test(`create key with a valid token from Origin ${origin} → 403, no key made`, async () => {
      const t = await webAppWithPassword(EMAIL, PASSWORD)
      const { b, csrf } = await signedIn(t, EMAIL, PASSWORD)
      const before = keyCount(t)
      const r = await b.post('/settings/keys', { csrf, library: 'live', scopes: 'notes:read' }, { origin })
      expect(r.status).toBe(403)
      expect(r.text).toContain('sent from another site')
      expect(keyCount(t)).toBe(before)
    })
  }

  test('revoke and sign out from another origin → 403; the key and the session survive', async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const { b, csrf } = await signedIn(t, EMAIL, PASSWORD)
    const made = await b.post('/settings/keys', { csrf, library: 'live', scopes: 'notes:read' }, { origin: OWN_ORIGIN })
    expect(made.status).toBe(200)
    const key = made.text.match(/svc_live_[A-Za-z0-9_-]+/)![0]
    const id = (await t.services.accounts.listKeysOf((await t.services.accounts.ensureAccount(EMAIL)).id)).find(k => key.startsWith(k.start.replace(/…$/, '')))!.id
    expect((await b.post(`/settings/keys/${id}/revoke`, { csrf }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(200)
    expect((await b.post('/signout', { csrf }, { origin: 'null' })).status).toBe(403)
    expect((await b.get('/settings')).status).toBe(200)
    // from its own origin, and with no Origin header at all, the same forms work
    expect((await b.post(`/settings/keys/${id}/revoke`, { csrf }, { origin: OWN_ORIGIN })).status).toBe(303)
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(401)
    expect((await b.post('/signout', { csrf })).status).toBe(303)
  })

  test('a server opened by another name than the public URL (localhost, a LAN address) still works: Origin matches Host', async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const { b, csrf } = await signedIn(t, EMAIL, PASSWORD)
    const before = keyCount(t)
    const ok = await b.post('/settings/keys', { csrf, library: 'live', scopes: 'notes:read' }, { origin: 'http://notes.lan:8080', host: 'notes.lan:8080' })
    expect(ok.status).toBe(200)
    expect(keyCount(t)).toBe(before + 1)
    // another site is refused whatever Host the request carries
    const refused = await b.post('/settings/keys', { csrf, library: 'live', scopes: 'notes:read' }, { origin: 'https://evil.example', host: 'notes.lan:8080' })
    expect(refused.status).toBe(403)
    expect((await b.post('/settings/keys', { csrf, library: 'live', scopes: 'notes:read' }, { origin: 'null', host: 'notes.lan:8080' })).status).toBe(403)
    expect(keyCount(t)).toBe(before + 1)
  })

  test('sign-in from another origin → 403, no session', async () => {
    const t = createWebTestApp()
    await t.web().setPassword(EMAIL, PASSWORD)
    const b = t.browser()
    const page = await b.get('/signin')
    const r = await b.post('/signin', { csrf: field(page.text, 'csrf')!, next: '/settings', email: EMAIL, password: PASSWORD }, { origin: 'https://evil.example' })
    expect(r.status).toBe(403)
    expect(r.cookies.some(c => c.startsWith('notesvc_session='))).toBe(false)
    const ok = await b.post('/signin', { csrf: field(page.text, 'csrf')!, next: '/settings', email: EMAIL, password: PASSWORD }, { origin: OWN_ORIGIN })
    expect(ok.status).toBe(303)
  })
})

describe('the OAuth consent form', () => {
  test('allow with a valid token from another origin → 403 and no code; from its own origin → a code', async () => {
    const t = oauthApp()
    const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
    const verifier = oauth.generateRandomCodeVerifier()
    const params = { client_id: reg.body.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz', scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }
    const user = await t.signIn()
    const page = await t.browse(t.authorizeUrl(params), { cookie: user.cookie })
    const form = { ...t.formFields(page.text), decision: 'allow' }
    for (const origin of FOREIGN_ORIGINS) {
      const r = await t.browse('/oauth/authorize', { cookie: user.cookie, form, headers: { origin } })
      expect([origin, r.status, r.location]).toEqual([origin, 403, null])
    }
    expect(t.db.query('SELECT count(*) AS n FROM oauth_codes').get()).toEqual({ n: 0 })
    const ok = await t.browse('/oauth/authorize', { cookie: user.cookie, form, headers: { origin: OWN_ORIGIN } })
    expect(ok.status).toBe(303)
    expect(new URL(ok.location!).searchParams.get('state')).toBe('xyz')
    expect(t.db.query('SELECT count(*) AS n FROM oauth_codes').get()).toEqual({ n: 1 })
  })
})
