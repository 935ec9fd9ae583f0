import type { authGuard } from '../../http/auth'
import { clientAddress, type PeerServer } from '../../http/client-address'
import { contractRoutes, route, type HandlerContext } from '../../http/contract'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/principal'
import type { AuditActor } from '../audit/model'
import { getRetentionPolicy, updateRetentionPolicy } from './contract'
import type { RetentionService } from './service'

/** Who changed a setting, as the audit log names them: an API key, an OAuth client's token (MCP: the same). */
export function actorOf(p: Principal): AuditActor {
  // the signed-in browser used as an API credential (web/api-session.ts) is the person
  if (p.credentialId.startsWith('ses_')) return { type: 'user', id: p.accountId }
  return { type: p.source === 'api_key' ? 'key' : 'oauth', id: p.credentialId }
}

export function retentionRoutes(deps: { guard: ReturnType<typeof authGuard>; retention: RetentionService }) {
  const { retention } = deps
  return contractRoutes('retention-routes', deps.guard, [
    route(getRetentionPolicy, ({ principal }) => retention.policy(principal.accountId)),
    route(updateRetentionPolicy, ({ principal, body, request, server }: HandlerContext<typeof updateRetentionPolicy> & { server?: PeerServer }) => {
      if (principal.sandbox) throw new ApiError('invalid_request', 'A sandbox key cannot change the retention policy, which also applies to the live library: use a live key (svc_live_…) or the settings page (/settings).')
      return retention.update(principal.accountId, body, {
        actor: actorOf(principal),
        origin: { ip: clientAddress(server, request), userAgent: request.headers.get('user-agent') },
      })
    }),
  ])
}
