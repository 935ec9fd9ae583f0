import type { authGuard } from '../../http/auth'
import type { PeerServer } from '../../http/client-address'
import { contractRoutes, route, type HandlerContext } from '../../http/contract'
import { ApiError } from '../../http/errors'
import { auditBy, isOwnCredential } from '../audit/by'
import { getRetentionPolicy, updateRetentionPolicy } from './contract'
import type { RetentionService } from './service'

export function retentionRoutes(deps: { guard: ReturnType<typeof authGuard>; retention: RetentionService }) {
  const { retention } = deps
  return contractRoutes('retention-routes', deps.guard, [
    route(getRetentionPolicy, ({ principal }) => retention.policy(principal.accountId)),
    route(updateRetentionPolicy, ({ principal, body, request, server }: HandlerContext<typeof updateRetentionPolicy> & { server?: PeerServer }) => {
      if (principal.sandbox) throw new ApiError('invalid_request', 'A sandbox key cannot change the retention policy, which also applies to the live library: use a live key (svc_live_…) or the settings page (/settings).')
      // a policy that deletes data is set by the person, not by an application holding a token for them
      if (!isOwnCredential(principal)) throw new ApiError('insufficient_scope', 'An OAuth access token or ID token cannot change the retention policy, which can delete the account\'s notes: a person sets it on the settings page (/settings) or with a live API key (svc_live_…).')
      return retention.update(principal.accountId, body, auditBy(principal, server, request))
    }),
  ])
}
