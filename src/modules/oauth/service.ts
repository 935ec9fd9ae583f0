import type { AuditService } from '../audit/service'
import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { createAuthorizationFlow } from './authorization-flow'
import { createClientRegistration } from './client-registration'
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata'
import { createOAuthRepo, type OAuthRepo } from './repo'
import { createTokenFlow } from './token-flow'

export { OAuthError } from './model'

export type OAuthService = ReturnType<typeof createOAuthService>

/**
 * The OAuth authorization server: client registration (and client authentication), the
 * authorization-code flow up to the code, and the token flow from the code on; each its own file.
 */
export function createOAuthService(deps: { store: Store; clock: Clock; ids: IdGenerator; config: { publicUrl: string }; repo?: OAuthRepo; audit?: Pick<AuditService, 'record'> }) {
  const { clock, ids, audit } = deps
  const repo = deps.repo ?? createOAuthRepo(deps.store)
  const issuer = deps.config.publicUrl
  const now = () => clock.now()
  const iso = (ms = 0) => new Date(now().getTime() + ms).toISOString()
  const clients = createClientRegistration({ repo, ids, now })
  const authorization = createAuthorizationFlow({ repo, issuer, iso, audit })
  const tokens = createTokenFlow({ repo, ids, iso, authenticateClient: clients.authenticateClient, audit })

  return {
    issuer,

    /** RFC 8414 authorization server metadata. */
    metadata: () => authorizationServerMetadata(issuer),

    /** RFC 9728 protected resource metadata, for the API (`publicUrl`) or the MCP endpoint. */
    resourceMetadata: (resource: string) => protectedResourceMetadata(issuer, resource),

    register: clients.register,
    checkAuthorization: authorization.checkAuthorization,
    describeScopes: authorization.describeScopes,
    approve: authorization.approve,
    deny: authorization.deny,
    token: tokens.token,
    revoke: tokens.revoke,
    verifyAccessToken: tokens.verifyAccessToken,
  }
}
