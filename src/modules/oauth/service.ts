import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'
import type { Clock } from '../../clock'
import { safeEqual, sha256, sha256Base64url } from '../../crypto/digest'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import type { Principal } from '../../http/admission'
import { ALL_SCOPES, isScope, SCOPES, type Scope } from '../../http/contract'
import { AUTH_METHODS, authorizationServerMetadata, protectedResourceMetadata, type AuthMethod } from './metadata'
import { redirectUriProblem } from './redirect-uri'
import { createOAuthRepo, type ClientRow, type OAuthRepo } from './repo'

/** Codes are good for this long, once. */
export const CODE_TTL_MS = 5 * 60 * 1000
export const ACCESS_TOKEN_TTL_S = 3600
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600
export const ACCESS_PREFIX = 'oat_'
export const REFRESH_PREFIX = 'ort_'
const MAX_REDIRECT_URIS = 10
const MAX_STATE_LENGTH = 2000

/**
 * A failure of an OAuth endpoint, answered as the OAuth error JSON (RFC 6749 section 5.2), never as the
 * API's envelope. 401 invalid_client carries a WWW-Authenticate challenge.
 */
export class OAuthError extends Error {
  constructor(readonly error: string, readonly description: string, readonly status = 400, readonly headers: Record<string, string> = {}) {
    super(description)
  }
}

const invalidClient = (why: string) => new OAuthError('invalid_client', why, 401, { 'www-authenticate': 'Basic realm="notesvc", charset="UTF-8"' })

const randomSecret = (bytes = 32) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')

const s256 = sha256Base64url

function parseScope(value: string | null | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean)
}

export interface AuthorizationRequest {
  client: ClientRow
  redirectUri: string
  scopes: Scope[]
  state: string | null
  codeChallenge: string
  resource: string | null
}

export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  /** the client or redirect URI cannot be trusted: show the error, never redirect */
  | { kind: 'page'; message: string }
  /** the redirect URI is registered: send the error there */
  | { kind: 'redirect'; location: string }

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

export type OAuthService = ReturnType<typeof createOAuthService>

export function createOAuthService(deps: { store: Store; clock: Clock; ids: IdGenerator; config: { publicUrl: string }; repo?: OAuthRepo; audit?: Pick<AuditService, 'record'> }) {
  const { clock, ids } = deps
  const repo = deps.repo ?? createOAuthRepo(deps.store)
  const issuer = deps.config.publicUrl
  const resources = [issuer, `${issuer}/mcp`]
  const now = () => clock.now()
  const iso = (ms = 0) => new Date(now().getTime() + ms).toISOString()

  function redirectTo(redirectUri: string, params: Record<string, string | null>): string {
    const url = new URL(redirectUri)
    for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v)
    url.searchParams.set('iss', issuer)
    return url.href
  }

  function clientScopes(client: ClientRow): Scope[] {
    return parseScope(client.scope).filter(isScope)
  }

  function redirectUris(client: ClientRow): string[] {
    return JSON.parse(client.redirect_uris) as string[]
  }

  /** RFC 6749 section 2.3 with the method the client registered; anything else is invalid_client. */
  async function authenticateClient(params: URLSearchParams, authorization: string | null): Promise<ClientRow> {
    let basic: { id: string; secret: string } | null = null
    if (authorization && /^basic /i.test(authorization)) {
      const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8')
      const colon = decoded.indexOf(':')
      if (colon < 0) throw invalidClient('The Basic credentials are malformed; send base64(client_id:client_secret).')
      const form = (s: string) => {
        try {
          return decodeURIComponent(s.replace(/\+/g, ' '))
        } catch {
          throw invalidClient('The Basic credentials are not correctly form-encoded.')
        }
      }
      basic = { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) }
    }
    const bodyId = params.get('client_id')
    const bodySecret = params.get('client_secret')
    if (basic && bodySecret !== null) throw new OAuthError('invalid_request', 'Use one client authentication method, not both Basic and client_secret.')
    if (basic && bodyId !== null && bodyId !== basic.id) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials.')
    const clientId = basic?.id ?? bodyId
    if (!clientId) throw invalidClient('No client authentication: send client_id (public clients) or the client credentials.')
    const client = await repo.client(clientId)
    if (!client) throw invalidClient(`There is no client ${clientId}; register at /oauth/register.`)
    const method = client.token_endpoint_auth_method as AuthMethod
    const presented = basic ? basic.secret : bodySecret
    const used: AuthMethod = basic ? 'client_secret_basic' : bodySecret !== null ? 'client_secret_post' : 'none'
    if (used !== method) throw invalidClient(`This client authenticates with ${method}, not ${used}.`)
    if (method !== 'none' && (!client.secret_hash || !safeEqual(sha256(presented ?? ''), client.secret_hash))) {
      throw invalidClient('The client secret is wrong.')
    }
    return client
  }

  async function issueTokens(o: { clientId: string; accountId: string; familyId: string; accessScope: string; refreshScope: string }): Promise<TokenResponse> {
    const access = ACCESS_PREFIX + randomSecret()
    const refresh = REFRESH_PREFIX + randomSecret()
    const created = iso()
    await repo.insertToken({ id: ids.next('tok'), token_hash: sha256(access), kind: 'access', family_id: o.familyId, client_id: o.clientId, account_id: o.accountId, scope: o.accessScope, created_at: created, expires_at: iso(ACCESS_TOKEN_TTL_S * 1000) })
    await repo.insertToken({ id: ids.next('tok'), token_hash: sha256(refresh), kind: 'refresh', family_id: o.familyId, client_id: o.clientId, account_id: o.accountId, scope: o.refreshScope, created_at: created, expires_at: iso(REFRESH_TOKEN_TTL_S * 1000) })
    return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: o.accessScope }
  }

  async function codeGrant(params: URLSearchParams, client: ClientRow): Promise<TokenResponse> {
    const code = params.get('code')
    const redirectUri = params.get('redirect_uri')
    const verifier = params.get('code_verifier')
    if (!code) throw new OAuthError('invalid_request', 'code is required.')
    if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri is required.')
    if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).')
    if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636).')
    const codeHash = sha256(code)
    // Failures are returned, not thrown, so that a revocation made on the way commits.
    const result = await repo.transaction(async (): Promise<TokenResponse | OAuthError> => {
      const row = await repo.code(codeHash)
      if (!row) return new OAuthError('invalid_grant', 'The authorization code is unknown or expired.')
      if (row.used_at) {
        // A replayed code: someone else may hold its tokens, so they all go (RFC 6749 section 4.1.2).
        await repo.revokeFamily(codeHash, iso())
        return new OAuthError('invalid_grant', 'The authorization code was already used; the tokens issued from it are revoked.')
      }
      if (row.expires_at <= iso()) return new OAuthError('invalid_grant', 'The authorization code has expired; start the authorization again.')
      if (row.client_id !== client.id) return new OAuthError('invalid_grant', 'The authorization code was issued to another client.')
      if (row.redirect_uri !== redirectUri) return new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request.')
      if (!safeEqual(s256(verifier), row.code_challenge)) return new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.')
      if (!(await repo.useCode(codeHash, iso()))) return new OAuthError('invalid_grant', 'The authorization code was already used.')
      return issueTokens({ clientId: client.id, accountId: row.account_id, familyId: codeHash, accessScope: row.scope, refreshScope: row.scope })
    })
    if (result instanceof OAuthError) throw result
    return result
  }

  async function refreshGrant(params: URLSearchParams, client: ClientRow): Promise<TokenResponse> {
    const token = params.get('refresh_token')
    if (!token) throw new OAuthError('invalid_request', 'refresh_token is required.')
    const requested = params.get('scope')
    const result = await repo.transaction(async (): Promise<TokenResponse | OAuthError> => {
      const row = await repo.token(sha256(token))
      if (!row || row.kind !== 'refresh') return new OAuthError('invalid_grant', 'The refresh token is unknown.')
      if (row.client_id !== client.id) return new OAuthError('invalid_grant', 'The refresh token was issued to another client.')
      if (row.revoked_at) return new OAuthError('invalid_grant', 'The refresh token is revoked.')
      const reused = async () => {
        // Rotation reuse: the token was stolen, or the client lost a response. Either way the family goes.
        await repo.revokeFamily(row.family_id, iso())
        return new OAuthError('invalid_grant', 'The refresh token was already used; every token of this authorization is revoked. Authorize again.')
      }
      if (row.used_at) return await reused()
      if (row.expires_at <= iso()) return new OAuthError('invalid_grant', 'The refresh token has expired; authorize again.')
      let accessScope = row.scope
      if (requested !== null) {
        const granted = new Set(parseScope(row.scope))
        const asked = [...new Set(parseScope(requested))]
        if (!asked.length || asked.some(s => !granted.has(s))) return new OAuthError('invalid_scope', `scope may only narrow the granted scope (${row.scope}).`)
        accessScope = asked.join(' ')
      }
      if (!(await repo.useToken(row.id, iso()))) return await reused()
      return issueTokens({ clientId: client.id, accountId: row.account_id, familyId: row.family_id, accessScope, refreshScope: row.scope })
    })
    if (result instanceof OAuthError) throw result
    return result
  }

  return {
    issuer,

    /** RFC 8414 authorization server metadata. */
    metadata: () => authorizationServerMetadata(issuer),

    /** RFC 9728 protected resource metadata, for the API (`publicUrl`) or the MCP endpoint. */
    resourceMetadata: (resource: string) => protectedResourceMetadata(issuer, resource),

    /** RFC 7591 dynamic registration. The secret of a confidential client is returned once; only its hash is kept. */
    async register(body: unknown) {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'Send the client metadata as a JSON object.')
      const m = body as Record<string, unknown>
      const uris = m.redirect_uris
      if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URIs.')
      if (uris.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `At most ${MAX_REDIRECT_URIS} redirect_uris.`)
      for (const u of uris) {
        const problem = redirectUriProblem(u)
        if (problem) throw new OAuthError('invalid_redirect_uri', problem)
      }
      const method = (m.token_endpoint_auth_method ?? 'client_secret_basic') as AuthMethod
      if (!AUTH_METHODS.includes(method)) throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}.`)
      if (m.grant_types !== undefined && (!Array.isArray(m.grant_types) || m.grant_types.some(g => g !== 'authorization_code' && g !== 'refresh_token'))) {
        throw new OAuthError('invalid_client_metadata', 'grant_types may contain only authorization_code and refresh_token.')
      }
      if (m.response_types !== undefined && (!Array.isArray(m.response_types) || m.response_types.some(r => r !== 'code'))) {
        throw new OAuthError('invalid_client_metadata', 'response_types may contain only code.')
      }
      let scopes: string[] = ALL_SCOPES
      if (m.scope !== undefined) {
        if (typeof m.scope !== 'string') throw new OAuthError('invalid_client_metadata', 'scope must be a space-separated string.')
        scopes = [...new Set(parseScope(m.scope))]
        const unknown = scopes.filter(s => !isScope(s))
        if (!scopes.length || unknown.length) throw new OAuthError('invalid_client_metadata', `Unknown scope ${unknown.join(', ')}; choose from ${ALL_SCOPES.join(' ')}.`)
      }
      const name = m.client_name === undefined ? 'Unnamed application' : m.client_name
      if (typeof name !== 'string' || name.trim() === '' || name.length > 200) throw new OAuthError('invalid_client_metadata', 'client_name must be a string of 1 to 200 characters.')
      const secret = method === 'none' ? null : 'cs_' + randomSecret()
      const at = now()
      const row: ClientRow = {
        id: ids.next('cli'),
        secret_hash: secret ? sha256(secret) : null,
        name: name.trim(),
        redirect_uris: JSON.stringify(uris),
        token_endpoint_auth_method: method,
        scope: scopes.join(' '),
        created_at: at.toISOString(),
      }
      await repo.insertClient(row)
      return {
        client_id: row.id,
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
        client_id_issued_at: Math.floor(at.getTime() / 1000),
        client_name: row.name,
        redirect_uris: uris as string[],
        token_endpoint_auth_method: method,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: row.scope,
      }
    },

    /** Checks an authorization request (the query of GET /oauth/authorize, or the consent form echoing it). */
    async checkAuthorization(params: URLSearchParams): Promise<AuthorizationCheck> {
      const one = (k: string) => (params.getAll(k).length > 1 ? undefined : params.get(k))
      const clientId = one('client_id')
      if (!clientId) return { kind: 'page', message: 'The request has no (or more than one) client_id. The application that sent you here is misconfigured.' }
      const client = await repo.client(clientId)
      if (!client) return { kind: 'page', message: `There is no application ${clientId}. The application that sent you here may need to register again.` }
      const redirectUri = one('redirect_uri')
      if (!redirectUri) return { kind: 'page', message: 'The request has no (or more than one) redirect_uri.' }
      if (!redirectUris(client).includes(redirectUri)) return { kind: 'page', message: 'The redirect_uri is not one the application registered, so you were not sent back to it.' }
      const state = one('state') ?? null
      const fail = (error: string, description: string): AuthorizationCheck => ({ kind: 'redirect', location: redirectTo(redirectUri, { error, error_description: description, state }) })
      for (const k of ['response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource']) {
        if (params.getAll(k).length > 1) return fail('invalid_request', `${k} is repeated.`)
      }
      if (state !== null && state.length > MAX_STATE_LENGTH) return fail('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters.`)
      if (params.get('response_type') !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.')
      const challenge = params.get('code_challenge')
      if (!challenge) return fail('invalid_request', 'code_challenge is required: PKCE with S256.')
      if (params.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain is not accepted.')
      if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters).')
      const allowed = clientScopes(client)
      const asked = params.get('scope')
      const scopes = asked === null ? allowed : [...new Set(parseScope(asked))]
      if (!scopes.length) return fail('invalid_scope', 'No scope was requested.')
      const bad = scopes.filter(s => !(allowed as string[]).includes(s))
      if (bad.length) return fail('invalid_scope', `Not allowed for this application: ${bad.join(' ')}.`)
      const resource = params.get('resource')
      if (resource !== null && !resources.includes(resource)) return fail('invalid_target', `resource must be ${resources.join(' or ')}.`)
      return { kind: 'ok', request: { client, redirectUri, scopes: scopes as Scope[], state, codeChallenge: challenge, resource } }
    },

    describeScopes(scopes: Scope[]) {
      return SCOPES.filter(s => scopes.includes(s.scope))
    },

    /** The user allowed the request: a single-use code, bound to everything the token request must repeat. */
    async approve(request: AuthorizationRequest, accountId: string, origin: AuditOrigin | null = null): Promise<string> {
      const code = randomSecret()
      await repo.removeCodesExpiredBefore(iso(-24 * 3600 * 1000))
      await repo.removeTokensExpiredBefore(iso())
      // the code and the consent's audit event: both or neither
      await repo.transaction(async () => {
        await repo.insertCode({
          code_hash: sha256(code),
          client_id: request.client.id,
          account_id: accountId,
          redirect_uri: request.redirectUri,
          scope: request.scopes.join(' '),
          code_challenge: request.codeChallenge,
          expires_at: iso(CODE_TTL_MS),
        })
        await deps.audit?.record({
          accountId, actor: { type: 'user', id: accountId }, action: 'oauth.granted', target: { type: 'oauth_client', id: request.client.id }, origin,
          details: { scopes: request.scopes.join(' ') },
        })
      })
      return redirectTo(request.redirectUri, { code, state: request.state })
    },

    deny(request: AuthorizationRequest): string {
      return redirectTo(request.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: request.state })
    },

    /** POST /oauth/token. */
    async token(params: URLSearchParams, authorization: string | null): Promise<TokenResponse> {
      const grant = params.get('grant_type')
      if (!grant) throw new OAuthError('invalid_request', 'grant_type is required.')
      if (grant !== 'authorization_code' && grant !== 'refresh_token') throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.')
      const client = await authenticateClient(params, authorization)
      return grant === 'authorization_code' ? codeGrant(params, client) : refreshGrant(params, client)
    },

    /**
     * RFC 7009. A refresh token takes its whole family with it; an access token goes alone. Unknown tokens,
     * and tokens of other clients, are answered the same way (200) so nothing is learnt from the answer.
     */
    async revoke(params: URLSearchParams, authorization: string | null, origin: AuditOrigin | null = null): Promise<void> {
      const client = await authenticateClient(params, authorization)
      const token = params.get('token')
      if (!token) throw new OAuthError('invalid_request', 'token is required.')
      const row = await repo.token(sha256(token))
      if (!row || row.client_id !== client.id) return
      await repo.transaction(async () => {
        if (row.kind === 'refresh') await repo.revokeFamily(row.family_id, iso())
        else await repo.revokeToken(row.id, iso())
        await deps.audit?.record({
          accountId: row.account_id, actor: { type: 'oauth', id: client.id }, action: 'oauth.revoked', target: { type: 'oauth_token', id: row.id }, origin,
          details: { kind: row.kind, wholeGrant: row.kind === 'refresh' },
        })
      })
    },

    /** The credential check for access tokens: one lookup on the unique hash index. */
    async verifyAccessToken(token: string): Promise<Principal | null> {
      if (!token.startsWith(ACCESS_PREFIX)) return null
      const row = await repo.token(sha256(token))
      if (!row || row.kind !== 'access' || row.revoked_at || row.expires_at <= iso()) return null
      return { accountId: row.account_id, sandbox: false, scopes: new Set(parseScope(row.scope).filter(isScope)), credentialId: row.id, source: 'oauth' }
    },
  }
}
