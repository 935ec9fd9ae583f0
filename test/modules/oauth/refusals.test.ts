import { describe, expect, test } from 'bun:test'
import { oauthApp, oauth, fixedClock, REDIRECT } from '../../helpers/oauth'

async function start(t: ReturnType<typeof oauthApp>, extra: Record<string, string> = {}) {
  const as = await t.discover()
  const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
  const client: oauth.Client = { client_id: reg.body.client_id, token_endpoint_auth_method: 'none' }
  const verifier = oauth.generateRandomCodeVerifier()
  const params: Record<string, string> = { client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz', scope: 'notes:read', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra }
  return { as, client, verifier, params }
}

async function codeFor(t: ReturnType<typeof oauthApp>, s: Awaited<ReturnType<typeof start>>) {
  const { res } = await t.consent(s.params)
  return oauth.validateAuthResponse(s.as, s.client, new URL(res.location!), 'xyz')
}

const exchange = (t: ReturnType<typeof oauthApp>, s: Awaited<ReturnType<typeof start>>, callback: URLSearchParams, verifier = s.verifier, redirect = REDIRECT) =>
  oauth.authorizationCodeGrantRequest(s.as, s.client, oauth.None(), callback, redirect, verifier, t.options)

describe('OAuth refusals', () => {
  test('wrong PKCE verifier → invalid_grant (the right one still works)', async () => {
    const t = oauthApp()
    const s = await start(t)
    const callback = await codeFor(t, s)
    const wrong = await exchange(t, s, callback, oauth.generateRandomCodeVerifier())
    expect(wrong.status).toBe(400)
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' })
    expect((await exchange(t, s, callback)).status).toBe(200)
  })

  test('plain PKCE and missing code_challenge are refused with an error redirect, no code', async () => {
    const t = oauthApp()
    const s = await start(t)
    const user = await t.signIn()
    for (const params of [{ ...s.params, code_challenge_method: 'plain', code_challenge: s.verifier }, { ...s.params, code_challenge_method: '' }, (({ code_challenge: _c, code_challenge_method: _m, ...rest }) => rest)(s.params)]) {
      const r = await t.browse(t.authorizeUrl(params), { cookie: user.cookie })
      expect(r.status).toBe(302)
      const back = new URL(r.location!)
      expect(back.origin + back.pathname).toBe(REDIRECT)
      expect(back.searchParams.get('error')).toBe('invalid_request')
      expect(back.searchParams.get('state')).toBe('xyz')
      expect(back.searchParams.get('code')).toBeNull()
    }
    const reg = await t.call('GET', '/.well-known/oauth-authorization-server')
    expect(reg.body.code_challenge_methods_supported).toEqual(['S256'])
  })

  test('wrong or unregistered redirect URI: an error page, never a redirect', async () => {
    const t = oauthApp()
    const s = await start(t)
    const user = await t.signIn()
    for (const uri of ['http://127.0.0.1:8765/callback/', 'http://127.0.0.1:8766/callback', 'https://evil.example/cb', 'http://127.0.0.1:8765/callback?x=1']) {
      const r = await t.browse(t.authorizeUrl({ ...s.params, redirect_uri: uri }), { cookie: user.cookie })
      expect(r.status).toBe(400)
      expect(r.location).toBeNull()
      expect(r.text).toContain('redirect_uri is not one the application registered')
    }
    const unknownClient = await t.browse(t.authorizeUrl({ ...s.params, client_id: 'cli_nope' }), { cookie: user.cookie })
    expect(unknownClient.status).toBe(400)
    expect(unknownClient.location).toBeNull()
    // The consent form is checked again: a tampered redirect_uri is refused the same way.
    const page = await t.browse(t.authorizeUrl(s.params), { cookie: user.cookie })
    const posted = await t.browse('/oauth/authorize', { cookie: user.cookie, form: { ...t.formFields(page.text), redirect_uri: 'https://evil.example/cb', decision: 'allow' } })
    expect(posted.status).toBe(400)
    expect(posted.location).toBeNull()
    // And at the token endpoint the redirect URI must match the authorization request's.
    const callback = await codeFor(t, s)
    const r = await exchange(t, s, callback, s.verifier, 'http://localhost:8765/callback')
    expect(await r.json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('scopes outside the client registration → invalid_scope redirect; unknown response_type → unsupported_response_type', async () => {
    const t = oauthApp()
    const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', scope: 'notes:read' })
    const user = await t.signIn()
    const base = { client_id: reg.body.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }
    for (const [params, error] of [[{ ...base, scope: 'notes:read notes:write' }, 'invalid_scope'], [{ ...base, scope: 'admin' }, 'invalid_scope'], [{ ...base, response_type: 'token' }, 'unsupported_response_type'], [{ ...base, resource: 'https://other.example' }, 'invalid_target']] as const) {
      const r = await t.browse(t.authorizeUrl(params), { cookie: user.cookie })
      expect(new URL(r.location!).searchParams.get('error')).toBe(error)
    }
    const ok = await t.browse(t.authorizeUrl({ ...base, resource: 'http://localhost/mcp' }), { cookie: user.cookie })
    expect(ok.status).toBe(200)
  })

  test('an expired code (over 5 minutes) → invalid_grant', async () => {
    const clock = fixedClock('2026-03-01T10:00:00Z')
    const t = oauthApp({ clock })
    const s = await start(t)
    const callback = await codeFor(t, s)
    clock.advance(5 * 60 * 1000 + 1)
    const r = await exchange(t, s, callback)
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') })
  })

  test('access tokens expire after an hour', async () => {
    const clock = fixedClock('2026-03-01T10:00:00Z')
    const t = oauthApp({ clock })
    const s = await start(t)
    const tokens = await oauth.processAuthorizationCodeResponse(s.as, s.client, await exchange(t, s, await codeFor(t, s)))
    clock.advance(3599_000)
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(200)
    clock.advance(2000)
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(401)
  })

  test('a replayed code is refused and revokes the tokens issued from it', async () => {
    const t = oauthApp()
    const s = await start(t)
    const callback = await codeFor(t, s)
    const tokens = await oauth.processAuthorizationCodeResponse(s.as, s.client, await exchange(t, s, callback))
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(200)
    const replay = await exchange(t, s, callback)
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' })
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(401)
    const refresh = await oauth.refreshTokenGrantRequest(s.as, s.client, oauth.None(), tokens.refresh_token!, t.options)
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('a code is bound to its client', async () => {
    const t = oauthApp()
    const s = await start(t)
    const callback = await codeFor(t, s)
    const other = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
    const r = await oauth.authorizationCodeGrantRequest(s.as, { client_id: other.body.client_id }, oauth.None(), callback, REDIRECT, s.verifier, t.options)
    expect(await r.json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('deny → access_denied with state; a wrong CSRF token → 403 and no redirect; no session → sign-in', async () => {
    const t = oauthApp()
    const s = await start(t)
    const { res } = await t.consent(s.params, 'deny')
    const back = new URL(res.location!)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe('xyz')
    expect(back.searchParams.get('iss')).toBe('http://localhost')
    expect(back.searchParams.get('code')).toBeNull()

    const user = await t.signIn()
    const page = await t.browse(t.authorizeUrl(s.params), { cookie: user.cookie })
    const fields = t.formFields(page.text)
    const forged = await t.browse('/oauth/authorize', { cookie: user.cookie, form: { ...fields, csrf_token: 'forged', decision: 'allow' } })
    expect(forged.status).toBe(403)
    expect(forged.location).toBeNull()
    const other = await t.signIn('other@example.com')
    const crossSession = await t.browse('/oauth/authorize', { cookie: other.cookie, form: { ...fields, decision: 'allow' } })
    expect(crossSession.status).toBe(403)
    const noSession = await t.browse('/oauth/authorize', { form: { ...fields, decision: 'allow' } })
    expect(noSession.status).toBe(303)
    expect(noSession.location).toStartWith('/signin?next=')
    expect(t.db.query('SELECT count(*) AS n FROM oauth_codes').get()).toEqual({ n: 0 }) // neither the denial nor the refusals issued a code
  })

  test('registration validates redirect URIs and metadata (RFC 7591 errors)', async () => {
    const t = oauthApp()
    const refused = [
      'http://app.example.com/cb',
      'https://app.example.com/cb#frag',
      'javascript:alert(1)',
      'not a url',
      'https://user:pw@app.example.com/cb',
      // wildcards: OAuth 2.1 compares redirect URIs exactly
      'https://*.example/cb',
      'https://app.example.com/*',
      'https://app.example.com/cb?next=*',
      'http://localhost:*/cb',
      // not an absolute URI with a host (URL parsing would repair these into one)
      'https:app.example.com/cb',
      'https:/app.example.com/cb',
      '//app.example.com/cb',
      '/cb',
      'https://app..example.com/cb',
      'https://-app.example.com/cb',
    ]
    for (const uri of refused) {
      const r = await t.register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })
      expect([uri, r.status, r.body.error]).toEqual([uri, 400, 'invalid_redirect_uri'])
    }
    // one bad URI among good ones refuses the whole registration
    expect((await t.register({ redirect_uris: [REDIRECT, 'https://*.example/cb'], token_endpoint_auth_method: 'none' })).status).toBe(400)
    for (const uri of ['http://localhost:3000/cb', 'http://[::1]:9/cb', 'http://127.0.0.1/cb', 'https://app.example.com/cb?x=1', 'https://192.0.2.10:8443/oauth/callback', 'https://app.example.com./cb', 'https://my_app.internal/cb', 'https://XN--BCHER-KVA.example/cb']) {
      expect((await t.register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' })).status).toBe(201)
    }
    expect((await t.register({ token_endpoint_auth_method: 'none' })).body.error).toBe('invalid_redirect_uri')
    expect((await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' })).body.error).toBe('invalid_client_metadata')
    expect((await t.register({ redirect_uris: [REDIRECT], scope: 'notes:read admin' })).body.error).toBe('invalid_client_metadata')
    const confidentialByDefault = await t.register({ redirect_uris: [REDIRECT] })
    expect(confidentialByDefault.body.token_endpoint_auth_method).toBe('client_secret_basic')
    expect(confidentialByDefault.body.client_secret).toStartWith('cs_')
  })

  test('errors are OAuth error JSON, not the API envelope', async () => {
    const t = oauthApp()
    const asJson = await t.call('POST', '/oauth/token', { body: { grant_type: 'authorization_code' } })
    expect(asJson.status).toBe(400)
    expect(asJson.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) })
    const form = (body: string, headers: Record<string, string> = {}) => t.call('POST', '/oauth/token', { body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } })
    expect((await form('grant_type=password&username=a&password=b')).body).toMatchObject({ error: 'unsupported_grant_type' })
    expect((await form('')).body).toMatchObject({ error: 'invalid_request' })
    const noClient = await form('grant_type=authorization_code&code=x&redirect_uri=x&code_verifier=x')
    expect(noClient.status).toBe(401)
    expect(noClient.headers.get('www-authenticate')).toStartWith('Basic')
    expect(noClient.body).toMatchObject({ error: 'invalid_client' })
    const badBasic = await form('grant_type=refresh_token&refresh_token=x', { authorization: 'Basic !!!' })
    expect(badBasic.status).toBe(401)
    const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
    const unknownCode = await form(`grant_type=authorization_code&client_id=${reg.body.client_id}&code=nope&redirect_uri=${encodeURIComponent(REDIRECT)}&code_verifier=${'a'.repeat(43)}`)
    expect(unknownCode.status).toBe(400)
    expect(unknownCode.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) })
    expect(unknownCode.headers.get('cache-control')).toBe('no-store')
    const regJson = await t.call('POST', '/oauth/register', { body: '{nope' })
    expect(regJson.body).toMatchObject({ error: 'invalid_client_metadata' })
    const wrongMethod = await t.call('GET', '/oauth/token')
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.body.error).toBe('invalid_request')
    // A refresh token is not an API credential.
    expect((await t.call('GET', '/v1/notes', { token: 'ort_' + 'a'.repeat(43) })).status).toBe(401)
  })
})

describe('OAuth endpoint rate limits', () => {
  test('registration and token requests are limited per client address (429, OAuth JSON, Retry-After)', async () => {
    const { createTestApp } = await import('../../helpers/app')
    // The OAuth endpoints count against the app's own limiter, in the write class, per client address.
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=100,write=2,processing=100' }, clock: fixedClock('2026-01-01T00:00:00.000Z') })
    const reg = () => t.call('POST', '/oauth/register', { body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } })
    expect((await reg()).status).toBe(201)
    expect((await reg()).status).toBe(201)
    const third = await reg()
    expect(third.status).toBe(429)
    expect(third.body).toMatchObject({ error: 'rate_limited' })
    // all at one instant: the whole 60-second window is left to wait
    expect(third.headers.get('retry-after')).toBe('60')
  })
})
