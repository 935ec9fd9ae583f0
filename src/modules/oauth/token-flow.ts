import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'
import { safeEqual, sha256, sha256Base64url } from '../../crypto/digest'
import type { IdGenerator } from '../../ids'
import type { Principal } from '../../http/admission'
import { isScope } from '../../http/contract'
import { isRole } from '../workspaces/model'
import { ACCESS_PREFIX, ACCESS_TOKEN_TTL_S, OAuthError, parseScope, randomSecret, REFRESH_PREFIX, REFRESH_TOKEN_TTL_S, type IsoClock, type TokenResponse } from './model'
import type { ClientRow, OAuthRepo } from './repo'

/**
 * The token endpoint's side: codes and refresh tokens exchanged for rotating token pairs (a replayed
 * code or refresh token revokes its whole family), revocation (RFC 7009), and the access-token check
 * the API's admission runs.
 */
export function createTokenFlow(deps: {
  repo: OAuthRepo
  ids: IdGenerator
  iso: IsoClock
  /** the client authentication both endpoints run first (client-registration.ts) */
  authenticateClient: (params: URLSearchParams, authorization: string | null) => Promise<ClientRow>
  audit?: Pick<AuditService, 'record'>
}) {
  const { repo, ids, iso, authenticateClient } = deps

  async function issueTokens(o: { clientId: string; accountId: string; workspaceId: string | null; familyId: string; accessScope: string; refreshScope: string }): Promise<TokenResponse> {
    const access = ACCESS_PREFIX + randomSecret()
    const refresh = REFRESH_PREFIX + randomSecret()
    const created = iso()
    await repo.insertToken({ id: ids.next('tok'), token_hash: sha256(access), kind: 'access', family_id: o.familyId, client_id: o.clientId, account_id: o.accountId, scope: o.accessScope, created_at: created, expires_at: iso(ACCESS_TOKEN_TTL_S * 1000), workspace_id: o.workspaceId })
    await repo.insertToken({ id: ids.next('tok'), token_hash: sha256(refresh), kind: 'refresh', family_id: o.familyId, client_id: o.clientId, account_id: o.accountId, scope: o.refreshScope, created_at: created, expires_at: iso(REFRESH_TOKEN_TTL_S * 1000), workspace_id: o.workspaceId })
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
      if (!safeEqual(sha256Base64url(verifier), row.code_challenge)) return new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.')
      if (!(await repo.useCode(codeHash, iso()))) return new OAuthError('invalid_grant', 'The authorization code was already used.')
      return issueTokens({ clientId: client.id, accountId: row.account_id, workspaceId: row.workspace_id, familyId: codeHash, accessScope: row.scope, refreshScope: row.scope })
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
      // a grant to a team workspace lasts as long as the person's membership (their access tokens are refused too)
      if (row.workspace_id && !(await repo.memberRole(row.workspace_id, row.account_id))) {
        return new OAuthError('invalid_grant', 'You are no longer a member of the workspace this authorization was for; authorize the application again and pick one of your workspaces.')
      }
      if (!(await repo.useToken(row.id, iso()))) return await reused()
      return issueTokens({ clientId: client.id, accountId: row.account_id, workspaceId: row.workspace_id, familyId: row.family_id, accessScope, refreshScope: row.scope })
    })
    if (result instanceof OAuthError) throw result
    return result
  }

  return {
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
          accountId: row.workspace_id ?? row.account_id, actor: { type: 'oauth', id: client.id }, action: 'oauth.revoked', target: { type: 'oauth_token', id: row.id }, origin,
          details: { kind: row.kind, wholeGrant: row.kind === 'refresh' },
        })
      })
    },

    /**
     * The credential check for access tokens: one lookup on the unique hash index, with the person's role
     * in the grant's workspace read in the same statement. A grant to a team acts as the person with
     * their role there now; a person no longer a member holds a token that opens nothing.
     */
    async verifyAccessToken(token: string): Promise<Principal | null> {
      if (!token.startsWith(ACCESS_PREFIX)) return null
      const row = await repo.accessToken(sha256(token))
      if (!row || row.kind !== 'access' || row.revoked_at || row.expires_at <= iso()) return null
      const workspace = row.workspace_id ?? row.account_id
      const role = workspace === row.account_id ? 'owner' : row.member_role
      if (!isRole(role)) return null
      return { accountId: workspace, actorId: row.account_id, role, sandbox: false, scopes: new Set(parseScope(row.scope).filter(isScope)), credentialId: row.id, source: 'oauth' }
    },
  }
}
