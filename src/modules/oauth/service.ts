import type { AuditService } from '../audit/service'
import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { createAuthorizationFlow } from './authorization-flow'
import { createClientRegistration } from './client-registration'
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata'
import { createOAuthRepo, type OAuthRepo } from './repo'
import { createTokenFlow } from './token-flow'
import type { ConsentWorkspace } from './model'

export { OAuthError } from './model'

export type OAuthService = ReturnType<typeof createOAuthService>

/**
 * The OAuth authorization server: client registration (and client authentication), the
 * authorization-code flow up to the code, and the token flow from the code on; each its own file.
 */
/** a person's workspaces as the workspaces repo's membershipsOf gives them (the personal one first) */
export type MembershipsOf = (accountId: string) => Promise<{ id: string; name: string | null; kind: string; role: string }[]>

export function createOAuthService(deps: {
  store: Store
  clock: Clock
  ids: IdGenerator
  config: { publicUrl: string }
  repo?: OAuthRepo
  audit?: Pick<AuditService, 'record'>
  /** the workspaces a person may grant an application access to (absent: their personal one only) */
  memberships?: MembershipsOf
}) {
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

    /**
     * The workspaces the consent page offers (the personal one first, named "Personal"), and the one a
     * consent form chose, when it is one of them (null otherwise: not a member).
     */
    async workspacesOf(accountId: string): Promise<ConsentWorkspace[]> {
      const rows = deps.memberships ? await deps.memberships(accountId) : []
      const personal = { id: accountId, name: 'Personal', role: 'owner' }
      return [personal, ...rows.filter(r => r.id !== accountId).map(r => ({ id: r.id, name: r.name ?? r.id, role: r.role }))]
    },
    deny: authorization.deny,
    token: tokens.token,
    revoke: tokens.revoke,
    verifyAccessToken: tokens.verifyAccessToken,
  }
}
