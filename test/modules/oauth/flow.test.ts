import { describe, expect, test } from 'bun:test'
import { oauthApp, oauth, REDIRECT } from '../../helpers/oauth'

async function grantError(p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return e.error
    throw e
  }
  throw new Error('expected an OAuth error response')
}

describe('OAuth 2.1 authorization code + PKCE with oauth4webapi', () => {
  test('discovery: RFC 8414 authorization server and RFC 9728 protected resource metadata', async () => {
    const t = oauthApp()
    const as = await t.discover()
    expect(as.issuer).toBe('http://localhost')
    expect(as.authorization_endpoint).toBe('http://localhost/oauth/authorize')
    expect(as.token_endpoint).toBe('http://localhost/oauth/token')
    expect(as.registration_endpoint).toBe('http://localhost/oauth/register')
    expect(as.revocation_endpoint).toBe('http://localhost/oauth/revoke')
    expect(as.code_challenge_methods_supported).toEqual(['S256'])
    expect(as.response_types_supported).toEqual(['code'])
    expect(as.grant_types_supported).toEqual(['authorization_code', 'refresh_token'])
    expect(as.token_endpoint_auth_methods_supported).toEqual(['none', 'client_secret_basic', 'client_secret_post'])
    expect(as.scopes_supported).toContain('notes:read')
    for (const [path, resource] of [['/.well-known/oauth-protected-resource', 'http://localhost'], ['/.well-known/oauth-protected-resource/mcp', 'http://localhost/mcp']] as const) {
      const r = await t.call('GET', path)
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ resource, authorization_servers: ['http://localhost'], bearer_methods_supported: ['header'] })
      expect(r.body.scopes_supported).toContain('usage:read')
    }
  })

  test('full flow: sign-in redirect, consent page, code exchange, scoped API access, charges with source oauth', async () => {
    const t = oauthApp()
    const as = await t.discover()
    const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test <app>' })
    expect(reg.status).toBe(201)
    expect(reg.body.client_id).toMatch(/^cli_/)
    expect(reg.body.client_secret).toBeUndefined()
    const client: oauth.Client = { client_id: reg.body.client_id, token_endpoint_auth_method: 'none' }
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const params = {
      client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, scope: 'notes:read summaries:write usage:read',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }
    // Not signed in: off to the sign-in page, which comes back here.
    const anon = await t.browse(t.authorizeUrl(params))
    expect(anon.status).toBe(303)
    const signin = new URL(anon.location!, 'http://localhost')
    expect(signin.pathname).toBe('/signin')
    const next = signin.searchParams.get('next')!
    expect(next.startsWith('/oauth/authorize?')).toBe(true)
    expect(Object.fromEntries(new URL(next, 'http://localhost').searchParams)).toEqual(params)

    const user = await t.signIn()
    const page = await t.browse(next, { cookie: user.cookie })
    expect(page.status).toBe(200)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.text).toContain('Test &lt;app&gt;')
    expect(page.text).not.toContain('Test <app>')
    expect(page.text).toContain('read notes, transcripts and summaries')
    expect(page.text).toContain('generate summaries from audio, text and video URLs')
    expect(page.text).not.toContain('notes:write')
    const fields = t.formFields(page.text)
    expect(fields.csrf_token).toBe(user.csrf)

    const allowed = await t.browse('/oauth/authorize', { cookie: user.cookie, form: { ...fields, decision: 'allow' } })
    expect(allowed.status).toBe(303)
    const back = new URL(allowed.location!)
    expect(back.origin + back.pathname).toBe(REDIRECT)
    expect(back.searchParams.get('state')).toBe(state)
    expect(back.searchParams.get('iss')).toBe('http://localhost')
    const callback = oauth.validateAuthResponse(as, client, back, state)

    const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callback, REDIRECT, verifier, t.options)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res)
    expect(tokens.token_type).toBe('bearer')
    expect(tokens.expires_in).toBe(3600)
    expect(tokens.scope).toBe('notes:read summaries:write usage:read')
    expect(tokens.access_token.length).toBeGreaterThanOrEqual(43)
    expect(tokens.refresh_token).toBeString()

    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(200)
    const outside = await t.call('POST', '/v1/notes', { token: tokens.access_token, body: { text: 'hello' } })
    expect(outside.status).toBe(403)
    expect(outside.body.error.code).toBe('insufficient_scope')

    const summary = await t.call('POST', '/v1/summaries', { token: tokens.access_token, body: { text: 'Maria opened the weekly planning meeting. We decided to ship the beta on March third. Tom will write the migration guide by Friday.' } })
    expect(summary.status).toBe(200)
    const usage = await t.call('GET', '/v1/usage', { token: tokens.access_token })
    expect(usage.status).toBe(200)
    expect(usage.body.recent[0]).toMatchObject({ operation: 'createSummary', source: 'oauth', credits: 2 })

    // The token is stored as a hash only.
    const stored = t.db.query<{ token_hash: string }, []>("SELECT token_hash FROM oauth_tokens").all().map(r => r.token_hash)
    expect(stored).not.toContain(tokens.access_token)
    expect(stored).toContain(new Bun.CryptoHasher('sha256').update(tokens.access_token).digest('hex'))
  })

  test('the default scope is the one the client registered', async () => {
    const t = oauthApp()
    const { tokens } = await t.fullFlow({ clientScope: 'notes:read' })
    expect(tokens.scope).toBe('notes:read')
    expect((await t.call('GET', '/v1/usage', { token: tokens.access_token })).status).toBe(403)
  })

  test('refresh rotation, down-scoping, and reuse detection revoking the family', async () => {
    const t = oauthApp()
    const { as, client, tokens } = await t.fullFlow({ scope: 'notes:read usage:read' })
    const refresh = (rt: string, o: { scope?: string } = {}) =>
      oauth.refreshTokenGrantRequest(as, client, oauth.None(), rt, { ...t.options, ...(o.scope ? { additionalParameters: { scope: o.scope } } : {}) })
    const second = await oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!))
    expect(second.refresh_token).not.toBe(tokens.refresh_token)
    expect(second.access_token).not.toBe(tokens.access_token)
    expect(second.scope).toBe('notes:read usage:read')
    expect((await t.call('GET', '/v1/notes', { token: second.access_token })).status).toBe(200)

    // Narrower scope for the access token; the refresh token keeps the grant.
    const third = await oauth.processRefreshTokenResponse(as, client, await refresh(second.refresh_token!, { scope: 'notes:read' }))
    expect(third.scope).toBe('notes:read')
    expect((await t.call('GET', '/v1/usage', { token: third.access_token })).status).toBe(403)
    expect(await grantError(oauth.processRefreshTokenResponse(as, client, await refresh(third.refresh_token!, { scope: 'notes:read notes:write' })))).toBe('invalid_scope')
    // invalid_scope did not use up the refresh token
    const fourth = await oauth.processRefreshTokenResponse(as, client, await refresh(third.refresh_token!))
    expect(fourth.scope).toBe('notes:read usage:read')

    // Reusing a rotated refresh token: refused, and every token of the family is revoked.
    expect(await grantError(oauth.processRefreshTokenResponse(as, client, await refresh(tokens.refresh_token!)))).toBe('invalid_grant')
    for (const access of [tokens.access_token, second.access_token, third.access_token, fourth.access_token]) {
      const r = await t.call('GET', '/v1/notes', { token: access })
      expect(r.status).toBe(401)
      expect(r.body.error.code).toBe('invalid_token')
    }
    expect(await grantError(oauth.processRefreshTokenResponse(as, client, await refresh(fourth.refresh_token!)))).toBe('invalid_grant')
  })

  test('revocation (RFC 7009): access token alone, refresh token with its family, unknown tokens 200', async () => {
    const t = oauthApp()
    const { as, client, tokens } = await t.fullFlow({ scope: 'notes:read' })
    const second = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, t.options))

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, t.options))
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(401)
    expect((await t.call('GET', '/v1/notes', { token: second.access_token })).status).toBe(200)

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), second.refresh_token!, t.options))
    expect((await t.call('GET', '/v1/notes', { token: second.access_token })).status).toBe(401)
    expect(await grantError(oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), second.refresh_token!, t.options)))).toBe('invalid_grant')

    const unknown = await oauth.revocationRequest(as, client, oauth.None(), 'oat_not-a-token', t.options)
    expect(unknown.status).toBe(200)
  })

  test('a confidential client (client_secret_basic and client_secret_post) authenticates at the token endpoint', async () => {
    const t = oauthApp()
    const as = await t.discover()
    for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
      const reg = await t.register({ redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: method, client_name: 'Server app', scope: 'notes:read' })
      expect(reg.status).toBe(201)
      expect(reg.body.client_secret).toBeString()
      const stored = t.db.query<{ secret_hash: string }, [string]>('SELECT secret_hash FROM oauth_clients WHERE id = ?').get(reg.body.client_id)!
      expect(stored.secret_hash).not.toBe(reg.body.client_secret)
      const client: oauth.Client = { client_id: reg.body.client_id, token_endpoint_auth_method: method }
      const auth = method === 'client_secret_basic' ? oauth.ClientSecretBasic : oauth.ClientSecretPost
      const verifier = oauth.generateRandomCodeVerifier()
      const params = { client_id: client.client_id, redirect_uri: 'https://app.example.com/cb', response_type: 'code', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }
      const exchange = async (a: oauth.ClientAuth) => {
        const { res } = await t.consent(params)
        const callback = oauth.validateAuthResponse(as, client, new URL(res.location!), oauth.expectNoState)
        return oauth.authorizationCodeGrantRequest(as, client, a, callback, 'https://app.example.com/cb', verifier, t.options)
      }
      const wrong = await exchange(auth('cs_wrong'))
      expect(wrong.status).toBe(401)
      expect(wrong.headers.get('www-authenticate')).toStartWith('Basic')
      expect(await wrong.json()).toMatchObject({ error: 'invalid_client' })
      const otherMethod = await exchange((method === 'client_secret_basic' ? oauth.ClientSecretPost : oauth.ClientSecretBasic)(reg.body.client_secret))
      expect(otherMethod.status).toBe(401)
      const noAuth = await exchange(oauth.None())
      expect(noAuth.status).toBe(401)
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(auth(reg.body.client_secret)))
      expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(200)
    }
  })
})
