import { createServer, type Server } from 'node:http'
import Provider from 'oidc-provider'
import * as oidc from 'openid-client'
import { freePort } from './process'

/** A person at the loopback provider: the devInteractions login name is the key of `people`. */
export interface ProviderPerson {
  email?: string
  /** a string as some providers send it (Amazon Cognito: "true"/"false") */
  email_verified?: boolean | 'true' | 'false'
  name?: string
  groups?: string[]
}

/**
 * A real OpenID Connect provider on loopback: panva's `oidc-provider` (an implementation independent
 * of notesvc's own code), with its development login and consent pages (any password is accepted for
 * a login name in `people`), one confidential client registered for `redirectUris`, and the scopes
 * openid, email, profile and groups. `people` may be changed while it runs.
 */
export async function startOidcProvider(o: { redirectUris: string[]; clientId: string; clientSecret: string; people: Record<string, ProviderPerson>; host?: string; claimsInIdToken?: boolean }) {
  const port = await freePort()
  const issuer = `http://${o.host ?? 'localhost'}:${port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: o.clientId,
      client_secret: o.clientSecret,
      redirect_uris: o.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    // with claimsInIdToken the ID token carries email and groups too, as many providers' do (the
    // ID token sent as a bearer has no userinfo call beside it); by default only in userinfo
    conformIdTokenClaims: !o.claimsInIdToken,
    async findAccount(_ctx, id) {
      const person = o.people[id]
      if (!person) return undefined
      return { accountId: id, claims: async () => ({ sub: id, ...person }) }
    },
  })
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err))
  /** every request the provider answered: `GET /auth 303`, `POST /token 200`, … (the query left out) */
  const requests: string[] = []
  provider.use(async (ctx, next) => {
    await next()
    requests.push(`${ctx.method} ${ctx.path} ${ctx.status}`)
  })
  const server: Server = createServer(provider.callback())
  await new Promise<void>(resolve => server.listen(port, o.host === '127.0.0.1' ? '127.0.0.1' : 'localhost', resolve))
  return {
    issuer,
    provider,
    requests,
    async stop() {
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}

/**
 * What a browser does at the provider, without a browser: follows `authorizationUrl` through the
 * provider's development login (as `login`) and consent pages, keeping its cookies, and gives the
 * query the provider sends back to `redirectUri` (`?code=…&state=…&iss=…`, or `?error=…`).
 */
export async function signInAtProviderWithoutBrowser(authorizationUrl: string, login: string, redirectUri: string): Promise<string> {
  const jar = new Map<string, string>()
  let method = 'GET'
  let url = authorizationUrl
  let body: URLSearchParams | undefined
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, { method, body, redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } })
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const [k, ...v] = pair!.trim().split('=')
      if (/expires=Thu, 01 Jan 1970/i.test(c) || /max-age=0\b/i.test(c)) jar.delete(k!)
      else jar.set(k!, v.join('='))
    }
    const location = res.headers.get('location')
    if (location) {
      const next = new URL(location, url).href
      if (next.startsWith(`${redirectUri}?`)) return new URL(next).search
      ;[method, url, body] = ['GET', next, undefined]
      continue
    }
    const html = await res.text()
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1]
    if (res.status !== 200 || !action || !prompt) throw new Error(`the provider answered ${res.status} at ${url}: ${html.slice(0, 300)}`)
    method = 'POST'
    url = new URL(action.replaceAll('&amp;', '&'), url).href
    body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt })
  }
  throw new Error(`no way back to ${redirectUri} after 20 steps`)
}

/**
 * An ID token of the provider for `login`, as any application the provider knows gets one: the
 * authorization code flow (PKCE, nonce) through the provider's pages without a browser, then the
 * code redeemed at its token endpoint with openid-client. What a person sends as a bearer.
 */
export async function idTokenAtProvider(o: { issuer: string; clientId: string; clientSecret: string; redirectUri: string; login: string; scope?: string }): Promise<string> {
  const c = await oidc.discovery(new URL(o.issuer), o.clientId, undefined, oidc.ClientSecretBasic(o.clientSecret), { execute: [oidc.allowInsecureRequests] })
  const verifier = oidc.randomPKCECodeVerifier()
  const nonce = oidc.randomNonce()
  const state = oidc.randomState()
  const url = oidc.buildAuthorizationUrl(c, {
    redirect_uri: o.redirectUri, scope: o.scope ?? 'openid email profile groups', state, nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  })
  const search = await signInAtProviderWithoutBrowser(url.href, o.login, o.redirectUri)
  const tokens = await oidc.authorizationCodeGrant(c, new URL(`${o.redirectUri}${search}`), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true })
  return tokens.id_token!
}
