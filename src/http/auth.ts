import { Elysia } from 'elysia'
import { ApiError } from './errors'
import { UNPARSEABLE_BODY } from './json-body'
import { operationForRoute, type Operation, type Scope } from './operations'
import type { RateLimiter, RateDecision } from './rate-limit'
import { commandLine } from '../command-name'

export type CredentialSource = 'api_key' | 'oauth' | 'mcp'

/** Who is calling: the account, which of its two libraries, and what the credential may do. */
export interface Principal {
  accountId: string
  sandbox: boolean
  scopes: Set<Scope>
  credentialId: string
  source: CredentialSource
}

/**
 * A credential check. Each kind of credential (API keys now; OAuth access tokens and ID tokens later)
 * is one verifier; the first that recognises the token decides.
 */
export type CredentialVerifier = (token: string) => Principal | null | Promise<Principal | null>

const CHALLENGE = 'Bearer realm="notesvc"'

function setRateHeaders(headers: Record<string, unknown>, d: RateDecision) {
  headers['x-ratelimit-limit'] = String(d.limit)
  headers['x-ratelimit-remaining'] = String(d.remaining)
  headers['x-ratelimit-reset'] = String(d.resetSeconds)
}

function enforce(limiter: RateLimiter, key: string, op: Operation, headers: Record<string, unknown>) {
  const d = limiter.hit(key, op.rateClass)
  setRateHeaders(headers, d)
  if (!d.allowed) {
    throw new ApiError('rate_limited', `Too many ${op.rateClass} requests: the limit is ${d.limit} per 60 seconds. Retry after ${d.resetSeconds} seconds.`, {
      retryAfterSeconds: d.resetSeconds,
      headers: { 'retry-after': String(d.resetSeconds) },
    })
  }
}

function checkScopes(principal: Principal, op: Operation) {
  const missing = op.scopes.filter(s => !principal.scopes.has(s))
  if (missing.length) {
    throw new ApiError('insufficient_scope', `This credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' and ')} needed by ${op.id}; use a key or token that has ${op.scopes.join(' and ')}.`, {
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${op.scopes.join(' ')}"` },
    })
  }
}

function clientAddress(server: { requestIP(r: Request): { address: string } | null } | null, request: Request): string {
  return server?.requestIP(request)?.address ?? 'local'
}

/**
 * The credential of an `Authorization: Bearer <token>` header (the scheme is case-insensitive, RFC 7235).
 * Only the header is read: a token in the query string (RFC 6750 section 2.3) ends up in access logs
 * and browser history, so it is not accepted. (This replaces @elysiajs/bearer, which also reads the
 * query string and costs a second per-request hook.)
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || header.length < 8 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  const token = header.slice(7).trim()
  return token === '' ? undefined : token
}

/**
 * Authentication, rate limiting and scope checks for every operation of the table, before body
 * validation: a request without a credential is told so, not told its body is wrong.
 */
export function authGuard(verifiers: CredentialVerifier[], limiter: RateLimiter) {
  async function verifyAsync(token: string, from: number): Promise<Principal | null> {
    for (let i = from; i < verifiers.length; i++) {
      const p = await verifiers[i]!(token)
      if (p) return p
    }
    return null
  }

  /** Sync while every verifier answers synchronously, so the hot path stays free of promises. */
  function verify(token: string): Principal | null | Promise<Principal | null> {
    for (let i = 0; i < verifiers.length; i++) {
      const p = verifiers[i]!(token)
      if (p instanceof Promise) return p.then(r => r ?? verifyAsync(token, i + 1))
      if (p) return p
    }
    return null
  }

  function admit(principal: Principal | null, op: Operation, headers: Record<string, unknown>, body: unknown) {
    if (!principal) {
      throw new ApiError('invalid_token', 'The credential is not valid: it is malformed, expired or revoked. Create a new key with `' + commandLine('keys create --email <email>') + '`.', {
        headers: { 'www-authenticate': `${CHALLENGE}, error="invalid_token"` },
      })
    }
    enforce(limiter, `c:${principal.credentialId}`, op, headers)
    checkScopes(principal, op)
    const unparseable = typeof body === 'object' && body !== null ? (body as Record<symbol, string>)[UNPARSEABLE_BODY] : undefined
    if (unparseable) {
      throw new ApiError('invalid_request', unparseable === 'empty'
        ? `${op.id} needs a JSON body; send one with \`Content-Type: application/json\`.`
        : 'The request body is not valid JSON; check quotes and commas, and send it with `Content-Type: application/json`.')
    }
    return { principal, operation: op }
  }

  return new Elysia({ name: 'notesvc-auth' })
    .derive({ as: 'global' }, ({ request, route, headers, set, server, body }) => {
      const method = request.method === 'HEAD' ? 'GET' : request.method
      const op = operationForRoute(method, route)
      if (!op) return { principal: null as Principal | null, operation: null as Operation | null }
      if (op.public) {
        enforce(limiter, `ip:${clientAddress(server, request)}`, op, set.headers)
        return { principal: null as Principal | null, operation: op as Operation | null }
      }
      const token = bearerToken(headers.authorization)
      if (!token) {
        throw new ApiError('invalid_token', 'No credential was sent: add the header `Authorization: Bearer <API key or access token>`.', {
          headers: { 'www-authenticate': CHALLENGE },
        })
      }
      const p = verify(token)
      if (p instanceof Promise) return p.then(r => admit(r, op, set.headers, body) as { principal: Principal | null; operation: Operation | null })
      return admit(p, op, set.headers, body) as { principal: Principal | null; operation: Operation | null }
    })
}

/** For handlers of credentialed operations: the guard has already refused anonymous calls. */
export function requirePrincipal(p: Principal | null): Principal {
  if (!p) throw new ApiError('invalid_token', 'No credential was sent.')
  return p
}
