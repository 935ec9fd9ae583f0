import type { authGuard } from '../../http/auth'
import { contractRoutes, queryReader, route, type Reply } from '../../http/contract'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/principal'
import { auditBy, isOwnCredential } from './by'
import { exportAuditEvents, listAuditEvents } from './contract'
import type { AuditService } from './service'
import { jsonLinesResponse } from './json-lines'

const listQuery = queryReader(listAuditEvents)
const exportQuery = queryReader(exportAuditEvents)

/** The log is read by the account's own credentials only (the operations' descriptions say why). */
function requireOwnCredential(p: Principal, operation: string): void {
  if (p.sandbox) {
    throw new ApiError('insufficient_scope', `A sandbox key cannot read the audit log (${operation}): use a live key of the account, with usage:read, or the settings page.`)
  }
  // only a live key or the signed-in browser: not an OAuth access token, not an ID token of the provider
  if (!isOwnCredential(p)) {
    throw new ApiError('insufficient_scope', `An OAuth access token or ID token cannot read the audit log (${operation}): the account's owner reads it with a live API key (usage:read) or on the settings page.`)
  }
}

export function auditRoutes(deps: { guard: ReturnType<typeof authGuard>; audit: AuditService }) {
  const { audit } = deps
  return contractRoutes('audit-routes', deps.guard, [
    route(listAuditEvents, async ({ principal, query }) => {
      requireOwnCredential(principal, 'listAuditEvents')
      const q = listQuery(query)
      const limit = q.limit ?? 50
      const page = await audit.list(principal.accountId, { limit, cursor: q.cursor, action: q.action, since: q.since })
      return { data: page.items, pagination: { limit, hasMore: page.nextCursor !== null, nextCursor: page.nextCursor } }
    }),
    route(exportAuditEvents, async ({ principal, query, request, server }) => {
      requireOwnCredential(principal, 'exportAuditEvents')
      const q = exportQuery(query)
      await audit.recordBy(auditBy(principal, server, request), {
        accountId: principal.accountId, action: 'audit.exported', target: { type: 'account', id: principal.accountId },
        details: q.since ? { since: new Date(q.since).toISOString() } : {},
      })
      return jsonLinesResponse(audit.export(principal.accountId, { since: q.since }), `audit-${principal.accountId}.jsonl`) as unknown as Reply<typeof exportAuditEvents>
    }),
  ])
}
