import { createRemoteJWKSet, customFetch, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose'
import type { Clock } from '../../clock'
import type { Config } from '../../config'
import type { CredentialVerifier, Principal } from '../../http/admission'
import { ALL_SCOPES } from '../../http/contract'
import { silentLogger, type Logger } from '../../log'
import type { SsoLinks } from '../sso/links'

/** Asymmetric algorithms only: never `none`, never HS* (the client secret is not a signing key here). */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** Three non-empty base64url segments: API keys, OAuth access tokens and `alg: none` tokens never match. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** A failed discovery is retried at most this often, so a provider outage is not hammered per request. */
const DISCOVERY_RETRY_MS = 10_000

export interface IdTokenVerifierOptions {
  /** the provider's issuer, exactly as its ID tokens' `iss` claim has it */
  issuer: string
  /** our client id at the provider: ID tokens must be issued to it (`aud`, and `azp` when several audiences) */
  audience: string
  /** the one linking rule and restriction check of the browser's sign-in too (src/modules/sso/links.ts) */
  links: Pick<SsoLinks, 'signIn'>
  log?: Logger
  fetch?: (url: string, init?: RequestInit) => Promise<Response>
  clock?: Clock
  /** leeway for exp/nbf/iat, in seconds (default 60) */
  clockToleranceSeconds?: number
  /** timeout of each request to the provider, in ms (default 5000) */
  timeoutMs?: number
}

type KeySet = ReturnType<typeof createRemoteJWKSet>

/**
 * The ID-token credential check: a bearer that is an ID token of the configured OpenID Connect
 * provider (signature checked against the JWKS named by its discovery document, issuer, audience,
 * expiry) is accepted as the account linked to its subject, with every scope of the live library.
 * The account is found, linked or made, and the allowed domains and groups checked, by the same rule
 * as the browser's sign-in (src/modules/sso/links.ts), from the ID token's claims alone: there is no
 * userinfo call here, so a groups or email claim the provider puts only in userinfo is missing (then
 * a configured restriction refuses the token). Anything wrong, including the provider being
 * unreachable or a refusal by that rule, gives null (a 401), never a 500.
 */
export function createIdTokenVerifier(opts: IdTokenVerifierOptions): CredentialVerifier {
  const log = opts.log ?? silentLogger
  const doFetch = opts.fetch ?? ((url: string, init?: RequestInit) => fetch(url, init))
  const now = () => (opts.clock ? opts.clock.now() : new Date())
  const timeoutMs = opts.timeoutMs ?? 5000
  const discoveryUrl = `${opts.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`

  let keySet: Promise<KeySet> | undefined
  let failedAt = -Infinity

  async function discover(): Promise<KeySet> {
    const res = await doFetch(discoveryUrl, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
    if (res.status !== 200) throw new Error(`${discoveryUrl} answered ${res.status}`)
    const doc = await res.json() as { issuer?: unknown; jwks_uri?: unknown }
    // OpenID Connect Discovery 1.0 section 4.3: the document's issuer must be the one we asked.
    if (doc.issuer !== opts.issuer) throw new Error(`${discoveryUrl} names issuer ${String(doc.issuer)}, not ${opts.issuer}`)
    if (typeof doc.jwks_uri !== 'string') throw new Error(`${discoveryUrl} has no jwks_uri`)
    const jwksUri = new URL(doc.jwks_uri)
    if (jwksUri.protocol !== 'https:' && jwksUri.protocol !== 'http:') throw new Error(`jwks_uri ${doc.jwks_uri} is not http(s)`)
    return createRemoteJWKSet(jwksUri, {
      timeoutDuration: timeoutMs,
      [customFetch]: (url, init) => doFetch(url, init),
    })
  }

  /** The provider's key set, discovered once and cached (jose itself caches and refreshes the keys). */
  function keys(): Promise<KeySet> {
    if (keySet) return keySet
    if (now().getTime() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(new Error('OpenID Connect discovery failed recently; retrying shortly'))
    const p = discover()
    keySet = p
    p.catch(() => {
      if (keySet === p) keySet = undefined
      failedAt = now().getTime()
    })
    return p
  }

  return async (token: string): Promise<Principal | null> => {
    if (!JWT_SHAPE.test(token)) return null
    let claims: JWTPayload
    try {
      claims = decodeJwt(token)
    } catch {
      return null
    }
    // Not this provider's token: no reason to reach the provider for it.
    if (claims.iss !== opts.issuer) return null

    let jwks: KeySet
    try {
      jwks = await keys()
    } catch (err) {
      log.warn('oidc discovery failed; ID tokens are refused until it succeeds', { issuer: opts.issuer, error: err })
      return null
    }

    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: opts.issuer,
        audience: opts.audience,
        algorithms: ID_TOKEN_ALGORITHMS,
        clockTolerance: opts.clockToleranceSeconds ?? 60,
        currentDate: now(),
        requiredClaims: ['sub', 'exp', 'iat'],
      }))
    } catch (err) {
      if (err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError)) {
        // The provider's keys could not be fetched (network, timeout, bad answer): a warning, and a 401.
        log.warn('oidc JWKS could not be fetched; ID token refused', { issuer: opts.issuer, error: err })
      } else if (err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC') {
        log.warn('oidc JWKS is not a usable key set; ID token refused', { issuer: opts.issuer, error: err })
      } else {
        log.debug('oidc ID token refused', { code: err.code, reason: err.message })
      }
      return null
    }

    // OpenID Connect Core 3.1.3.7: with several audiences, azp must name us.
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== opts.audience) return null
    if (payload.azp !== undefined && payload.azp !== opts.audience) return null
    const subject = payload.sub
    if (typeof subject !== 'string' || subject === '') return null

    let signedIn
    try {
      signedIn = await opts.links.signIn(payload as Record<string, unknown>, 'id_token')
    } catch (err) {
      log.warn('oidc sign-in could not find or create the account', { subject, error: err })
      return null
    }
    if (!signedIn.ok) return null
    return {
      accountId: signedIn.accountId,
      sandbox: false,
      scopes: new Set(ALL_SCOPES),
      credentialId: `oidc:${subject}`,
      source: 'oauth',
    }
  }
}

/**
 * The ID-token verifiers for createApp's `verifiers`: one when NOTESVC_OIDC_ISSUER and
 * NOTESVC_OIDC_CLIENT_ID are set, none otherwise.
 */
export function idTokenVerifiers(parts: { config: Config; services: { ssoLinks: Pick<SsoLinks, 'signIn'> | null }; clock?: Clock; log?: Logger }): CredentialVerifier[] {
  const { config } = parts
  const links = parts.services.ssoLinks
  if (!config.oidcIssuer || !config.oidcClientId || !links) return []
  return [createIdTokenVerifier({ issuer: config.oidcIssuer, audience: config.oidcClientId, links, clock: parts.clock, log: parts.log })]
}
