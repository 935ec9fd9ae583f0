import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'
import { createTestApp } from '../../helpers/app'
import { idTokenVerifiers } from '../../../src/modules/oidc/id-token'
import { loadConfig } from '../../../src/config'
import type { Logger } from '../../../src/log'

const CLIENT_ID = 'notesvc-client'

/** A loopback stand-in for an OpenID Connect provider: discovery document and JWKS, nothing else. */
let provider: ReturnType<typeof Bun.serve>
let issuer: string
let signingKey: CryptoKey
let otherKey: CryptoKey
let esKey: CryptoKey
let jwks: { keys: JWK[] }
const hits = { discovery: 0, jwks: 0 }

beforeAll(async () => {
  const rs = await generateKeyPair('RS256')
  const es = await generateKeyPair('ES256')
  signingKey = rs.privateKey
  esKey = es.privateKey
  otherKey = (await generateKeyPair('RS256')).privateKey
  jwks = { keys: [
    { ...(await exportJWK(rs.publicKey)), kid: 'rs1', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(es.publicKey)), kid: 'es1', alg: 'ES256', use: 'sig' },
  ] }
  provider = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/.well-known/openid-configuration') {
        hits.discovery++
        return Response.json({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] })
      }
      if (path === '/jwks') {
        hits.jwks++
        return Response.json(jwks)
      }
      return new Response('not found', { status: 404 })
    },
  })
  issuer = `http://127.0.0.1:${provider.port}`
})

afterAll(() => provider.stop(true))

function idToken(claims: Record<string, unknown> = {}, o: { key?: CryptoKey; alg?: string; kid?: string; iss?: string; aud?: string | string[]; expiresIn?: string | number; iat?: number } = {}) {
  const alg = o.alg ?? 'RS256'
  return new SignJWT({ email: 'ada@example.com', email_verified: true, ...claims })
    .setProtectedHeader({ alg, kid: o.kid ?? (alg === 'ES256' ? 'es1' : 'rs1'), typ: 'JWT' })
    .setIssuer(o.iss ?? issuer)
    .setAudience(o.aud ?? CLIENT_ID)
    .setSubject((claims.sub as string | undefined) ?? 'sub-ada')
    .setIssuedAt(o.iat)
    .setExpirationTime(o.expiresIn ?? '10m')
    .sign(o.key ?? (alg === 'ES256' ? esKey : signingKey))
}

function b64url(v: unknown) {
  return Buffer.from(JSON.stringify(v)).toString('base64url')
}

/** An app with the provider configured: createApp's own ID-token verifier, over the sso module's links. */
function app(o: { issuer?: string; log?: Logger; env?: Record<string, string> } = {}) {
  return createTestApp({ env: { NOTESVC_OIDC_ISSUER: o.issuer ?? issuer, NOTESVC_OIDC_CLIENT_ID: CLIENT_ID, ...o.env }, log: o.log })
}

describe('ID tokens of the configured OpenID Connect provider as bearers', () => {
  test('a valid ID token lists and creates notes in that user\'s own library', async () => {
    const t = app()
    const token = await idToken()
    const list = await t.call('GET', '/v1/notes', { token })
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([])

    const created = await t.call('POST', '/v1/notes', { token, body: { title: 'From SSO', content: 'hello' } })
    expect(created.status).toBe(201)
    const account = await t.services.accounts.requireAccount('ada@example.com')
    expect(t.db.query<{ account_id: string; issuer: string }, [string]>('SELECT account_id, issuer FROM sso_identities WHERE subject = ?').get('sub-ada')).toEqual({ account_id: account.id, issuer })
    const row = t.db.query<{ account_id: string; sandbox: number }, [string]>('SELECT account_id, sandbox FROM notes WHERE id = ?').get(created.body.id)!
    expect(row).toEqual({ account_id: account.id, sandbox: 0 })
    expect((await t.call('GET', '/v1/notes', { token })).body.data.map((n: { id: string }) => n.id)).toEqual([created.body.id])

    // Someone else's API key does not see it; ES256 tokens of the provider work too.
    expect((await t.call('GET', '/v1/notes', { token: await t.key({ email: 'bob@example.com' }) })).body.data).toEqual([])
    const es = await idToken({}, { alg: 'ES256' })
    expect((await t.call('GET', '/v1/notes', { token: es })).body.data).toHaveLength(1)
  })

  test('an existing account with the verified email is linked, not duplicated; its API key still works', async () => {
    const t = app()
    const apiKey = await t.key({ email: 'ada@example.com' })
    const byKey = await t.call('POST', '/v1/notes', { token: apiKey, body: { title: 'by key', content: 'x' } })
    expect(byKey.status).toBe(201)
    const r = await t.call('GET', '/v1/notes', { token: await idToken() })
    expect(r.status).toBe(200)
    expect(r.body.data.map((n: { id: string }) => n.id)).toEqual([byKey.body.id])
    expect(t.db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n).toBe(1)
    expect((await t.call('GET', '/v1/notes', { token: apiKey })).status).toBe(200)
  })

  test('linked by subject after first use: the same account even when the email changes', async () => {
    const t = app()
    const first = await t.call('POST', '/v1/notes', { token: await idToken({ sub: 'sub-42', email: 'old@example.com' }), body: { title: 'n', content: 'x' } })
    expect(first.status).toBe(201)
    const again = await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-42', email: 'new@example.com' }) })
    expect(again.status).toBe(200)
    expect(again.body.data.map((n: { id: string }) => n.id)).toEqual([first.body.id])
    // Even with no email at all.
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-42', email: undefined, email_verified: undefined }) })).body.data).toHaveLength(1)
    expect(t.db.query<{ email: string }, []>('SELECT email FROM accounts').all()).toEqual([{ email: 'old@example.com' }])
  })

  test('refused with 401 invalid_token: wrong audience, wrong issuer, expired, other key, alg none, HS256, not yet valid', async () => {
    const reasons: unknown[] = []
    const t = app({ log: { debug: (_m, f) => { reasons.push(f?.code) }, info() {}, warn() {}, error() {} } })
    const now = Math.floor(Date.now() / 1000)
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ iss: issuer, aud: CLIENT_ID, sub: 'sub-ada', email: 'ada@example.com', email_verified: true, iat: now, exp: now + 600 })}.`
    const hs = await new SignJWT({ email: 'ada@example.com', email_verified: true })
      .setProtectedHeader({ alg: 'HS256', kid: 'rs1' }).setIssuer(issuer).setAudience(CLIENT_ID).setSubject('sub-ada').setIssuedAt().setExpirationTime('10m')
      .sign(new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!'))
    const cases: Record<string, string> = {
      'wrong audience': await idToken({}, { aud: 'someone-else' }),
      'several audiences without azp': await idToken({}, { aud: [CLIENT_ID, 'someone-else'] }),
      'azp of another client': await idToken({ azp: 'someone-else' }),
      'wrong issuer': await idToken({}, { iss: 'https://evil.example.com' }),
      'issuer with a trailing slash': await idToken({}, { iss: `${issuer}/` }),
      'expired': await idToken({}, { iat: now - 7200, expiresIn: now - 3600 }),
      'other key, same kid': await idToken({}, { key: otherKey }),
      'alg none': none,
      'alg none with a signature segment': `${none}c2ln`,
      'HS256': hs,
      'not an email-verified unknown user': await idToken({ sub: 'sub-new', email: 'new@example.com', email_verified: false }),
      'not yet valid': await new SignJWT({ email: 'ada@example.com', email_verified: true })
        .setProtectedHeader({ alg: 'RS256', kid: 'rs1' }).setIssuer(issuer).setAudience(CLIENT_ID).setSubject('sub-ada')
        .setIssuedAt().setNotBefore('1h').setExpirationTime('2h').sign(signingKey),
      'garbage': 'aaa.bbb.ccc',
    }
    for (const [name, token] of Object.entries(cases)) {
      const r = await t.call('GET', '/v1/notes', { token })
      expect({ name, status: r.status, code: r.body?.error?.code }).toEqual({ name, status: 401, code: 'invalid_token' })
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"')
    }
    // Refused for the right reasons, by jose itself.
    expect(new Set(reasons)).toEqual(new Set(['ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JWT_EXPIRED', 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JOSE_ALG_NOT_ALLOWED']))
    // None of them created or linked an account.
    expect(t.db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n).toBe(0)
    // A valid one still works afterwards.
    expect((await t.call('GET', '/v1/notes', { token: await idToken() })).status).toBe(200)
  })

  test('an account already linked to another subject is not taken over by email', async () => {
    const t = app()
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-a' }) })).status).toBe(200)
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-b' }) })).status).toBe(401)
  })

  // fails if the bearer path skips NOTESVC_OIDC_ALLOWED_DOMAINS / NOTESVC_OIDC_ALLOWED_GROUPS
  test('the allowed domains and groups: a token outside them is refused (401) and makes no account', async () => {
    const t = app({ env: { NOTESVC_OIDC_ALLOWED_DOMAINS: 'example.com', NOTESVC_OIDC_ALLOWED_GROUPS: 'notesvc' } })
    const outsider = await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-out', email: 'eve@elsewhere.org', groups: ['notesvc'] }) })
    expect(outsider.status).toBe(401)
    // the groups are read from the ID token itself (no userinfo call on this path)
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-nogroup' }) })).status).toBe(401)
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ sub: 'sub-sales', groups: ['sales'] }) })).status).toBe(401)
    expect(t.db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts').get()!.n).toBe(0)
    expect((await t.call('GET', '/v1/notes', { token: await idToken({ groups: ['notesvc'] }) })).status).toBe(200)
  })

  test('API keys and other bearers never reach the provider; discovery is cached', async () => {
    const t = app()
    const before = { ...hits }
    expect((await t.call('GET', '/v1/notes', { token: await t.key() })).status).toBe(200)
    expect((await t.call('GET', '/v1/notes', { token: 'svc_live_nope' })).status).toBe(401)
    expect((await t.call('GET', '/v1/notes', { token: 'opaque-token' })).status).toBe(401)
    expect(hits).toEqual(before)
    for (let i = 0; i < 3; i++) expect((await t.call('GET', '/v1/notes', { token: await idToken() })).status).toBe(200)
    expect(hits.discovery - before.discovery).toBe(1)
    expect(hits.jwks - before.jwks).toBe(1)
  })

  test('an unreachable provider gives 401 and a warning, never a 500', async () => {
    const dead = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const deadIssuer = `http://127.0.0.1:${dead.port}`
    dead.stop(true)
    const warnings: string[] = []
    const log: Logger = { debug() {}, info() {}, warn: m => { warnings.push(m) }, error() {} }
    const t = app({ issuer: deadIssuer, log })
    const r = await t.call('GET', '/v1/notes', { token: await idToken({}, { iss: deadIssuer }) })
    expect(r.status).toBe(401)
    expect(r.body.error.code).toBe('invalid_token')
    expect(warnings.length).toBe(1)
    expect(warnings[0]).toContain('oidc')
  })

  test('idTokenVerifiers reads the config: none without issuer and client id', () => {
    const ssoLinks = { signIn: async () => ({ ok: true as const, accountId: 'acct_1', email: 'a@example.com', created: false }) }
    expect(idTokenVerifiers({ config: loadConfig({}), services: { ssoLinks: null } })).toHaveLength(0)
    expect(idTokenVerifiers({ config: loadConfig({ NOTESVC_OIDC_ISSUER: issuer }), services: { ssoLinks } })).toHaveLength(0)
    expect(idTokenVerifiers({ config: loadConfig({ NOTESVC_OIDC_ISSUER: issuer, NOTESVC_OIDC_CLIENT_ID: CLIENT_ID }), services: { ssoLinks } })).toHaveLength(1)
    expect(() => loadConfig({ NOTESVC_OIDC_ISSUER: 'not a url' })).toThrow('NOTESVC_OIDC_ISSUER')
  })
})
