import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'
import { sha256 } from '../../crypto/digest'
import { isScope, SCOPES, type Scope } from '../../http/contract'
import { CODE_TTL_MS, parseScope, randomSecret, type AuthorizationCheck, type AuthorizationRequest, type IsoClock } from './model'
import type { ClientRow, OAuthRepo } from './repo'

const MAX_STATE_LENGTH = 2000

/**
 * The authorization endpoint's side of the code flow: the request checked (errors shown on a page
 * when the redirect URI cannot be trusted, sent to it when it can), then the user's answer: a
 * single-use code bound to the request, or access_denied.
 */
export function createAuthorizationFlow(deps: { repo: OAuthRepo; issuer: string; iso: IsoClock; audit?: Pick<AuditService, 'record'> }) {
  const { repo, issuer, iso } = deps
  const resources = [issuer, `${issuer}/mcp`]

  function redirectTo(redirectUri: string, params: Record<string, string | null>): string {
    const url = new URL(redirectUri)
    for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v)
    url.searchParams.set('iss', issuer)
    return url.href
  }

  const clientScopes = (client: ClientRow): Scope[] => parseScope(client.scope).filter(isScope)
  const redirectUris = (client: ClientRow): string[] => JSON.parse(client.redirect_uris) as string[]

  return {
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

    /**
     * The user allowed the request: a single-use code, bound to everything the token request must repeat,
     * and to the workspace chosen (`workspaceId`, one the person is a member of: the route checks it;
     * null or their own id: their personal workspace).
     */
    async approve(request: AuthorizationRequest, accountId: string, origin: AuditOrigin | null = null, workspaceId: string | null = null): Promise<string> {
      const workspace = workspaceId && workspaceId !== accountId ? workspaceId : null
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
          workspace_id: workspace,
        })
        // in the workspace's log, by the person
        await deps.audit?.record({
          accountId: workspace ?? accountId, actor: { type: 'user', id: accountId }, action: 'oauth.granted', target: { type: 'oauth_client', id: request.client.id }, origin,
          details: { scopes: request.scopes.join(' ') },
        })
      })
      return redirectTo(request.redirectUri, { code, state: request.state })
    },

    deny(request: AuthorizationRequest): string {
      return redirectTo(request.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', state: request.state })
    },
  }
}
