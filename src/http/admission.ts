import type { RateClass } from '../config'
import { commandLine } from '../command-name'
import { asDatabaseUnavailable } from '../db/store'
import { ApiError, type ErrorCode } from './errors'
import type { OperationTable } from './contract'
import { roleOf, type CredentialSource, type Principal } from './principal'
import { roleAllows, type Role } from './roles'
import type { Scope } from './scopes'
import type { RateDecision, RateLimiter } from './rate-limit'

export type { CredentialSource, Principal }

/**
 * A credential check. Each kind of credential (API keys, OAuth access tokens, ID tokens) is one
 * verifier; the first that recognises the token decides.
 */
export type CredentialVerifier = (token: string) => Promise<Principal | null>

/** What admission reads of an operation: its name (for messages), scopes, rate class, and whether it is public. */
export interface AdmissionTerms {
  readonly id: string
  readonly scopes: readonly Scope[]
  readonly rateClass: RateClass
  readonly public?: boolean
  /** the error codes it declares beyond the common ones (the sandbox scenarios fire only on those) */
  readonly errors?: readonly ErrorCode[]
  /** the least role in the workspace it needs (absent: any member's) */
  readonly role?: Role
}

/** The API's challenge; MCP names its protected-resource metadata instead. */
const API_CHALLENGE = 'Bearer realm="notesvc"'

export interface AdmissionRequest {
  /** the bearer token, when one was sent */
  credential: string | undefined
  /** the client's address, asked for only by public operations (they are counted per address) */
  address: () => string
}

export interface AdmissionOptions {
  /** the WWW-Authenticate challenge of a 401 (default: the API's) */
  challenge?: string
  /** where the X-RateLimit-* headers go, when the answer is an HTTP response of this operation */
  rateHeaders?: Record<string, unknown>
}

export type Admission = ReturnType<typeof createAdmission>

/** An admitted request: its principal (null for a public operation) and what the rate limit read alongside. */
export type Admitted = {
  principal: Principal | null
  /** the value the rate-limit statement read alongside its count (RateDecision.alongside), if any */
  alongside: string | undefined
}

/**
 * setRateHeaders for a Headers object kept from answer to answer (an answer made before routing): the
 * limit and the reset are set only when they differ from the last ones written (the limit never does;
 * the reset moves once a second), the remaining count every time.
 */
export function rateHeadersOn(headers: Headers): (d: RateDecision) => void {
  let limit = -1
  let reset = -1
  return d => {
    if (d.unlimited) return
    if (d.limit !== limit) headers.set('x-ratelimit-limit', String((limit = d.limit)))
    headers.set('x-ratelimit-remaining', String(d.remaining))
    if (d.resetSeconds !== reset) headers.set('x-ratelimit-reset', String((reset = d.resetSeconds)))
  }
}

/**
 * The first verifier's answer when it is known at once (a key in the key cache): its principal, or
 * undefined when only the verifier itself can tell (then the verifiers are asked in order).
 */
export type CachedVerifier = (token: string) => Principal | undefined

function setRateHeaders(headers: Record<string, unknown>, d: RateDecision) {
  if (d.unlimited) return
  headers['x-ratelimit-limit'] = String(d.limit)
  headers['x-ratelimit-remaining'] = String(d.remaining)
  headers['x-ratelimit-reset'] = String(d.resetSeconds)
}

function checkScopes(principal: Principal, terms: AdmissionTerms) {
  const missing = terms.scopes.filter(s => !principal.scopes.has(s))
  if (missing.length) {
    throw new ApiError('insufficient_scope', `This credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} needed by ${terms.id}; use a key or token that has ${terms.scopes.join(' and ')}.`, {
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${terms.scopes.join(' ')}"` },
    })
  }
}

/**
 * The role check beside the scope check: a member whose role in the workspace is below the operation's
 * gets the interface's 403 insufficient_scope, naming both roles. A person alone in their personal
 * workspace is its owner, so this never refuses them.
 */
function checkRole(principal: Principal, terms: AdmissionTerms) {
  const held = roleOf(principal)
  if (!terms.role || roleAllows(held, terms.role)) return
  throw new ApiError('insufficient_scope', `Your role in this workspace is ${held}; ${terms.id} needs ${terms.role} or above. Ask an owner or admin of the workspace to change your role.`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", error_description="role ${terms.role} needed"` },
    details: [{ field: 'role', issue: `${held} (needed: ${terms.role})` }],
  })
}

function unknownCredential(challenge: string): ApiError {
  return new ApiError('invalid_token', 'The credential is not valid: it is malformed, expired or revoked. Create a new key with `' + commandLine('keys create --email <email>') + '`.', {
    headers: { 'www-authenticate': `${challenge}, error="invalid_token"` },
  })
}

/**
 * How a credential is admitted, for the HTTP API and MCP alike: credential → principal (the verifiers
 * in order) → rate limit (per credential and rate class) → scope. Each refusal is the ApiError the
 * error handler answers: 401 invalid_token, 429 rate_limited, 403 insufficient_scope.
 */
export function createAdmission(verifiers: CredentialVerifier[], limiter: RateLimiter, operations: OperationTable, cached?: CachedVerifier) {
  /**
   * The terms of the operation served at a route pattern; undefined for routes outside the operations
   * table (pages, OAuth, the MCP transport), which admission does not guard.
   */
  const termsForRoute = (method: string, route: string): AdmissionTerms | undefined => operations.forRoute(method, route)

  /** The terms of one operation by its id (the MCP tools are named by it). */
  const termsForOperation = (operationId: string): AdmissionTerms => operations.byId(operationId)

  /**
   * The rate limiter's key of a principal (`c:<credential id>`), made once per principal object (the key
   * cache's, the same from request to request): the same string each time is hashed once by the
   * limiter's map, where a new one was built and hashed on every request.
   */
  const limiterKeys = new WeakMap<Principal, string>()
  function limiterKey(principal: Principal): string {
    let key = limiterKeys.get(principal)
    if (key === undefined) limiterKeys.set(principal, (key = `c:${principal.credentialId}`))
    return key
  }

  async function verify(token: string): Promise<Principal | null> {
    for (const verifier of verifiers) {
      const p = await verifier(token)
      if (p) return p
    }
    return null
  }

  async function limit(key: string, terms: AdmissionTerms, rateHeaders: Record<string, unknown> | undefined): Promise<RateDecision> {
    return decide(await limiter.hit(key, terms.rateClass), terms, rateHeaders)
  }

  /** Sets the X-RateLimit headers of a decision and refuses it with 429 when it is over the limit. */
  function decide(d: RateDecision, terms: AdmissionTerms, rateHeaders: Record<string, unknown> | undefined): RateDecision {
    if (rateHeaders) setRateHeaders(rateHeaders, d)
    if (!d.allowed) {
      throw new ApiError('rate_limited', `Too many ${terms.rateClass} requests: the limit is ${d.limit} per 60 seconds. Retry after ${d.resetSeconds} seconds.`, {
        retryAfterSeconds: d.resetSeconds,
        headers: { 'retry-after': String(d.resetSeconds) },
      })
    }
    return d
  }

  /** Credential → principal: a missing or unrecognised credential is refused with 401 invalid_token. */
  async function identify(credential: string | undefined, challenge = API_CHALLENGE): Promise<Principal> {
    if (!credential) {
      throw new ApiError('invalid_token', 'No credential was sent: add the header `Authorization: Bearer <API key or access token>`.', {
        headers: { 'www-authenticate': challenge },
      })
    }
    const p = await verify(credential)
    if (!p) throw unknownCredential(challenge)
    return p
  }

  /**
   * Principal → rate limit → scope, for one operation. A public operation asks nothing of a principal
   * (`admit` counts it per client address instead).
   */
  async function authorize(principal: Principal, terms: AdmissionTerms, rateHeaders?: Record<string, unknown>): Promise<Admitted> {
    if (terms.public) return { principal, alongside: undefined }
    const d = await limit(limiterKey(principal), terms, rateHeaders)
    checkScopes(principal, terms)
    checkRole(principal, terms)
    return { principal, alongside: d.alongside }
  }

  /**
   * The whole path for one request to one operation: the principal, or null for a public operation
   * (counted per client address, whatever credential was sent).
   */
  async function admit(request: AdmissionRequest, terms: AdmissionTerms, opts: AdmissionOptions = {}): Promise<Admitted> {
    if (terms.public) {
      try {
        await limit(`ip:${request.address()}`, terms, opts.rateHeaders)
      } catch (err) {
        // Windows kept in a database that cannot be reached: answered uncounted. The public operations
        // read nothing of it, and health is how a caller learns that it is down.
        if (!asDatabaseUnavailable(err)) throw err
      }
      return { principal: null, alongside: undefined }
    }
    return authorize(await identify(request.credential, opts.challenge), terms, opts.rateHeaders)
  }

  /**
   * `admit` decided at once, without a turn through promises, when every step is known without
   * waiting: a credential the first verifier has cached (so the verifiers in order would give the same
   * principal) and a limiter that counts in memory. The same count, headers, refusals (thrown) and
   * scope check as `admit`; undefined when a step would have to wait: then `admit`.
   */
  function admitNow(credential: string | undefined, terms: AdmissionTerms, rateHeaders?: Record<string, unknown>): Admitted | undefined {
    if (terms.public || credential === undefined || !cached || !limiter.hitNow) return undefined
    const principal = cached(credential)
    if (!principal) return undefined
    const d = decide(limiter.hitNow(limiterKey(principal), terms.rateClass), terms, rateHeaders)
    checkScopes(principal, terms)
    checkRole(principal, terms)
    return { principal, alongside: d.alongside }
  }

  /**
   * For an answer made before routing: the principal of a credential the first verifier has cached,
   * when it has every scope the operation needs and the limiter counts in memory; undefined otherwise.
   * Counts nothing: every refusal is left to `admit`.
   */
  function knownPrincipal(credential: string | undefined, terms: AdmissionTerms): Principal | undefined {
    if (terms.public || credential === undefined || !cached || !limiter.hitNow) return undefined
    const principal = cached(credential)
    if (!principal) return undefined
    for (const s of terms.scopes) if (!principal.scopes.has(s)) return undefined
    return principal
  }

  /**
   * Counts one request of a known principal at once: the decision for its X-RateLimit headers, or
   * undefined when it is refused, which counts nothing (the limiter counts no refused request): `admit`
   * then refuses it again, with the 429.
   */
  function countNow(principal: Principal, terms: AdmissionTerms): RateDecision | undefined {
    const d = limiter.hitNow!(limiterKey(principal), terms.rateClass)
    return d.allowed ? d : undefined
  }

  /**
   * Counts one request from a client address against a rate class, for endpoints outside the
   * operations (the OAuth server's registration, token and revocation endpoints): the same limiter,
   * windows and 429 as every operation.
   */
  async function limitAddress(bucket: string, address: string, rateClass: RateClass, rateHeaders?: Record<string, unknown>): Promise<void> {
    await limit(`${bucket}:${address}`, { id: bucket, scopes: [], rateClass }, rateHeaders)
  }

  return { identify, authorize, admit, admitNow, knownPrincipal, countNow, limitAddress, termsForRoute, termsForOperation }
}
