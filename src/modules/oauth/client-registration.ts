import { safeEqual, sha256 } from '../../crypto/digest'
import type { IdGenerator } from '../../ids'
import { ALL_SCOPES, isScope } from '../../http/contract'
import { AUTH_METHODS, type AuthMethod } from './metadata'
import { invalidClient, OAuthError, parseScope, randomSecret } from './model'
import { redirectUriProblem } from './redirect-uri'
import type { ClientRow, OAuthRepo } from './repo'

const MAX_REDIRECT_URIS = 10

/**
 * The clients: RFC 7591 dynamic registration, and the client authentication of RFC 6749 section 2.3
 * that the token and revocation endpoints run first.
 */
export function createClientRegistration(deps: { repo: OAuthRepo; ids: IdGenerator; now: () => Date }) {
  const { repo, ids } = deps

  /** The client metadata checked; a problem is invalid_client_metadata or invalid_redirect_uri. */
  function checkedMetadata(body: unknown) {
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
    return { uris: uris as string[], method, scopes, name: name.trim() }
  }

  /** RFC 7591 dynamic registration. The secret of a confidential client is returned once; only its hash is kept. */
  async function register(body: unknown) {
    const { uris, method, scopes, name } = checkedMetadata(body)
    const secret = method === 'none' ? null : 'cs_' + randomSecret()
    const at = deps.now()
    const row: ClientRow = {
      id: ids.next('cli'),
      secret_hash: secret ? sha256(secret) : null,
      name,
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
      redirect_uris: uris,
      token_endpoint_auth_method: method,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: row.scope,
    }
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

  return { register, authenticateClient }
}
