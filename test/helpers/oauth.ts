import * as oauth from 'oauth4webapi'
import { createTestApp, fixedClock } from './app'
import type { SessionService } from '../../src/modules/web/sessions'
import type { OAuthService } from '../../src/modules/oauth'
import type { Clock } from '../../src/clock'

export const REDIRECT = 'http://127.0.0.1:8765/callback'

/**
 * A code for `scope` from the authorization-code flow with PKCE, run against the OAuth service
 * directly (no HTTP), approved by the account `accountId` for the client registered with REDIRECT;
 * and the verifier that redeems it.
 */
export async function approvedCode(service: OAuthService, clientId: string, accountId: string, scope: string): Promise<{ value: string; verifier: string }> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const challenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url')
  const check = await service.checkAuthorization(new URLSearchParams({
    client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope, code_challenge: challenge, code_challenge_method: 'S256',
  }))
  if (check.kind !== 'ok') throw new Error(`authorization refused: ${JSON.stringify(check)}`)
  const value = new URL(await service.approve(check.request, accountId)).searchParams.get('code')!
  return { value, verifier }
}

/** A test app with the OAuth server wired in, a browser session helper, and oauth4webapi pointed at app.handle. */
export function oauthApp(opts: { clock?: Clock } = {}) {
  const t = createTestApp({ clock: opts.clock })
  const service: OAuthService = t.services.oauth
  const sessions: SessionService = t.services.web.sessions
  const fetch = (url: string | URL | Request, init?: RequestInit) => t.app.handle(new Request(url, init)) as Promise<Response>
  const options = { [oauth.customFetch]: fetch, [oauth.allowInsecureRequests]: true }
  const issuer = new URL(t.config.publicUrl)

  async function discover() {
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: 'oauth2' }))
  }

  async function register(metadata: Record<string, unknown>) {
    const res = await fetch(`${t.config.publicUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) })
    return { status: res.status, body: (await res.json()) as any }
  }

  /** A signed-in browser: the session is made directly with the session service. */
  async function signIn(email = 'user@example.com') {
    const account = await t.services.accounts.ensureAccount(email)
    const s = await sessions!.create(account.id)
    return { account, cookie: s.setCookie.split(';')[0]!, csrf: s.csrf }
  }

  async function browse(url: string, o: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...o.headers }
    if (o.cookie) headers.cookie = o.cookie
    if (o.form) headers['content-type'] = 'application/x-www-form-urlencoded'
    const res = await fetch(new URL(url, t.config.publicUrl), { method: o.form ? 'POST' : 'GET', headers, body: o.form ? new URLSearchParams(o.form).toString() : undefined, redirect: 'manual' })
    return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text() }
  }

  function authorizeUrl(params: Record<string, string>) {
    return `/oauth/authorize?${new URLSearchParams(params).toString()}`
  }

  /** The hidden fields of the consent form. */
  function formFields(html: string): Record<string, string> {
    const out: Record<string, string> = {}
    const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) out[unescape(m[1]!)] = unescape(m[2]!)
    return out
  }

  /**
   * The browser part of the flow: sign in, load the consent page, press a button. Returns the redirect
   * the browser would follow.
   */
  async function consent(params: Record<string, string>, decision: 'allow' | 'deny' = 'allow', signedIn?: Awaited<ReturnType<typeof signIn>>) {
    const user = signedIn ?? await signIn()
    const page = await browse(authorizeUrl(params), { cookie: user.cookie })
    if (page.status !== 200) throw new Error(`consent page ${page.status}: ${page.location ?? page.text}`)
    const res = await browse('/oauth/authorize', { cookie: user.cookie, form: { ...formFields(page.text), decision } })
    return { page, res, user }
  }

  /** Registers a public client and runs the whole flow to tokens. */
  async function fullFlow(o: { scope?: string; clientScope?: string } = {}) {
    const as = await discover()
    const reg = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test app', ...(o.clientScope ? { scope: o.clientScope } : {}) })
    const client: oauth.Client = { client_id: reg.body.client_id, token_endpoint_auth_method: 'none' }
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const params: Record<string, string> = {
      client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      ...(o.scope ? { scope: o.scope } : {}),
    }
    const { res, user } = await consent(params)
    const callback = oauth.validateAuthResponse(as, client, new URL(res.location!), state)
    const tokens = await oauth.processAuthorizationCodeResponse(as, client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callback, REDIRECT, verifier, options))
    return { as, client, tokens, user, verifier, callback, params }
  }

  return { ...t, service: () => service!, fetch, options, issuer, discover, register, signIn, browse, authorizeUrl, formFields, consent, fullFlow }
}

export { oauth, fixedClock }
