import * as oidc from 'openid-client'
import type { Clock } from '../../clock'
import type { SsoConfig } from '../../config'
import { silentLogger, type Logger } from '../../log'
import type { AuditOrigin } from '../audit/model'
import type { SsoLinks, SsoRefusal, SsoRefused } from './links'

/** Where the provider sends the browser back: what the operator registers at the provider as the redirect URI. */
export const SSO_CALLBACK_PATH = '/signin/oidc/callback'
/** Where the "Sign in with …" button goes: it starts the authorization request. */
export const SSO_START_PATH = '/signin/oidc'
/** A failed discovery is retried at most this often, so a provider outage is not hammered per click. */
const DISCOVERY_RETRY_MS = 10_000

/** What the browser keeps between the start and the callback (an HttpOnly cookie, ten minutes). */
export interface SsoFlow {
  state: string
  nonce: string
  verifier: string
  next: string
}

export type { SsoRefusal }

export type SsoResult =
  | { ok: true; accountId: string; email: string; created: boolean; next: string }
  | SsoRefused

export type SsoService = ReturnType<typeof createSsoService>

/**
 * The page's message for the provider's error answer at the callback (RFC 6749 4.1.2.1): what it
 * said, quoted and cut short (the query is the provider's, or whoever sent the browser there), and
 * what to do. `access_denied` is the person cancelling or refusing consent, or the provider refusing
 * them: try again and allow it, else ask for access; any other code is for the administrator.
 */
function providerRefusal(name: string, error: string, description: string | null): string {
  const said = `"${error.slice(0, 64)}"${description ? `: ${description.slice(0, 200)}` : ''}`
  if (error === 'access_denied') {
    return `The sign-in was cancelled or refused at ${name} (it answered ${said}), so nobody was signed in. To sign in, go back to the sign-in page, choose "Sign in with ${name}" again and allow notesvc when ${name} asks; if ${name} refuses you, ask your administrator to give you access to notesvc there.`
  }
  return `${name} did not complete the sign-in (it answered ${said}), so nobody was signed in. Go back to the sign-in page and choose "Sign in with ${name}" again; if it happens again, ask your administrator, telling them what ${name} answered.`
}

/**
 * Browser sign-in through the organisation's OpenID Connect provider with openid-client (discovery,
 * authorization code + PKCE S256, state and nonce, ID token and userinfo checks): the account is
 * found, linked or made, and the allowed domains and groups checked, by the one linking rule of
 * ./links.ts, which the ID-token bearer path follows too.
 */
export function createSsoService(deps: {
  config: SsoConfig
  issuer: string
  clientId: string
  clientSecret?: string
  publicUrl: string
  links: SsoLinks
  clock: Clock
  log?: Logger
}) {
  const { config, issuer, links, clock } = deps
  const log = deps.log ?? silentLogger
  const redirectUri = `${deps.publicUrl}${SSO_CALLBACK_PATH}`
  const name = config.providerName

  let discovered: Promise<oidc.Configuration> | undefined
  let failedAt = -Infinity
  /** The provider's metadata, discovered once from the issuer (a failure is retried after a pause). */
  function client(): Promise<oidc.Configuration> {
    if (discovered) return discovered
    if (clock.now().getTime() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(new Error('discovery failed moments ago'))
    const auth = deps.clientSecret ? oidc.ClientSecretBasic(deps.clientSecret) : oidc.None()
    // http:// only when the operator configured an http issuer (a provider on loopback, tests)
    const execute = issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : []
    const p = oidc.discovery(new URL(issuer), deps.clientId, undefined, auth, { execute, timeout: 10 })
    discovered = p
    p.catch(err => {
      if (discovered === p) discovered = undefined
      failedAt = clock.now().getTime()
      log.warn('oidc discovery failed; single sign-on is unavailable until it succeeds', { issuer, error: err })
    })
    return p
  }

  const refuse = (reason: SsoRefusal, status: number, title: string, message: string): SsoRefused => ({ ok: false, reason, status, title, message })
  const unreachable = () => refuse('provider_unreachable', 502, `${name} did not answer`,
    `notesvc could not reach ${name} (${issuer}) to complete the sign-in. Try again in a minute; if it keeps failing, ask your administrator to check that notesvc can reach ${issuer} (notesvc doctor shows it).`)

  /**
   * A refusal before the provider named anyone (no flow cookie, another state, the provider's error,
   * a code or ID token refused, the provider unreachable): anyone can cause one with a request, so it
   * is not in the audit log (it would let anyone append rows without limit) but in the log, at debug.
   */
  function anonymous(reason: SsoRefusal, origin: AuditOrigin): void {
    log.debug('oidc sign-in refused before the provider named anyone', { reason, ip: origin.ip ?? null })
  }

  return {
    providerName: name,
    redirectUri,

    /** The provider's authorization URL for a new sign-in, and what the browser keeps until the callback. */
    async begin(next: string): Promise<{ url: string; flow: SsoFlow } | SsoResult> {
      let c: oidc.Configuration
      try {
        c = await client()
      } catch {
        return unreachable()
      }
      const flow: SsoFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next }
      const url = oidc.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: config.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      })
      return { url: url.href, flow }
    },

    /**
     * The callback: `search` is the query the provider sent the browser back with, `flow` what the
     * browser kept (null when its cookie is gone). Records the outcome in the audit log.
     */
    async finish(search: string, flow: SsoFlow | null, origin: AuditOrigin): Promise<SsoResult> {
      const params = new URLSearchParams(search)
      if (!flow) {
        anonymous('flow_missing', origin)
        return refuse('flow_missing', 400, 'Sign-in expired',
          `This sign-in through ${name} expired or was started in another browser. Go back to the sign-in page and choose "Sign in with ${name}" again (cookies must be allowed for this site).`)
      }
      const again = `Go back to the sign-in page and choose "Sign in with ${name}" again.`
      if (params.get('state') !== flow.state) {
        anonymous('state_mismatch', origin)
        return refuse('state_mismatch', 400, 'Sign-in not accepted', `The answer from ${name} does not belong to the sign-in this browser started, so it was not accepted. ${again}`)
      }
      const error = params.get('error')
      if (error) {
        anonymous('provider_refused', origin)
        return refuse('provider_refused', 403, `${name} did not sign you in`, providerRefusal(name, error, params.get('error_description')))
      }

      let c: oidc.Configuration
      try {
        c = await client()
      } catch {
        anonymous('provider_unreachable', origin)
        return unreachable()
      }
      let claims: Record<string, unknown>
      try {
        const tokens = await oidc.authorizationCodeGrant(c, new URL(`${redirectUri}?${params}`), {
          pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true,
        })
        claims = { ...tokens.claims()! }
        // Many providers put email and groups only in userinfo (the ID token of a code flow may omit them).
        if (c.serverMetadata().userinfo_endpoint) {
          const info = await oidc.fetchUserInfo(c, tokens.access_token, claims.sub as string)
          claims = { ...claims, ...info, sub: claims.sub }
        }
      } catch (err) {
        const network = !(err instanceof oidc.ClientError) && !(err instanceof oidc.ResponseBodyError) && !(err instanceof oidc.AuthorizationResponseError)
        log.warn('oidc sign-in: the code exchange or its ID token was refused', { issuer, error: err })
        anonymous(network ? 'provider_unreachable' : 'token_rejected', origin)
        return network ? unreachable() : refuse('token_rejected', 400, 'Sign-in not accepted',
          `The answer from ${name} could not be verified (its ID token does not match this sign-in, or the code was already used), so nobody was signed in. ${again}`)
      }

      const r = await links.signIn(claims, 'browser', origin)
      return r.ok ? { ...r, next: flow.next } : r
    },
  }
}
