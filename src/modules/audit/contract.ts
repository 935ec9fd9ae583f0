import { operationDefiner } from '../../http/contract'
import { ApiError } from '../../http/errors'
import type { Principal } from '../../http/principal'
import { auditBy, isOwnCredential } from './by'
import { jsonLinesResponse } from './json-lines'
import { AuditEventList, AuditEventSchema, ExportAuditEventsQuery, ListAuditEventsQuery } from './schemas'
import type { AuditService } from './service'

const defineOperation = operationDefiner<{ audit: AuditService }>()

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

// The audit log is for the account's owner and their own tools, not for agents: not MCP tools.
const notATool = { tool: false } as const
const WHO = 'Readable by the account\'s own credentials: a live API key with `usage:read`, or the signed-in browser. OAuth access tokens, ID tokens of the identity provider and sandbox keys are refused with 403 `insufficient_scope`: the log shows where and how the owner works (addresses, user agents), which an application acting for them has no need to read.'

const listAuditEvents = defineOperation({
  id: 'listAuditEvents', method: 'GET', path: '/v1/audit-events', tag: 'Audit',
  summary: 'The account\'s audit log',
  description: `The account's security- and privacy-relevant events, newest first: sign-ins (and failed ones), keys created and revoked, OAuth grants and revocations, recordings played, transcripts exported, notes and folders deleted, plan changes, exports of this log. Each says who (actor), what (action, target), when (at) and from where (ip, userAgent); never a secret or a note's text. Page with \`cursor\` = the previous page's \`pagination.nextCursor\`; filter with \`action\` and \`since\`. ${WHO}`,
  role: 'admin', scopes: ['usage:read'], credits: 0,
  query: ListAuditEventsQuery,
  responses: { 200: AuditEventList },
  mcp: notATool,
}, async (q, { principal }, { audit }) => {
  requireOwnCredential(principal, 'listAuditEvents')
  const limit = q.limit ?? 50
  const page = await audit.list(principal.accountId, { limit, cursor: q.cursor, action: q.action, since: q.since })
  return { data: page.items, pagination: { limit, hasMore: page.nextCursor !== null, nextCursor: page.nextCursor } }
})

const exportAuditEvents = defineOperation({
  id: 'exportAuditEvents', method: 'GET', path: '/v1/audit-events/export', tag: 'Audit',
  summary: 'Export the audit log as JSON lines',
  description: `Every event of the account (from \`since\`, when given), oldest first, as JSON lines (\`application/x-ndjson\`): one AuditEvent per line, streamed, with a \`Content-Disposition\` file name. The export is itself recorded (\`audit.exported\`). ${WHO}`,
  role: 'admin', scopes: ['usage:read'], credits: 0,
  query: ExportAuditEventsQuery,
  responses: { 200: AuditEventSchema },
  textResponses: ['application/x-ndjson'],
  mcp: notATool,
}, async (q, caller, { audit }) => {
  const { accountId } = caller.principal
  requireOwnCredential(caller.principal, 'exportAuditEvents')
  return jsonLinesResponse(await audit.exportFor(accountId, { since: q.since }, auditBy(caller)), `audit-${accountId}.jsonl`)
})

export const auditOperations = [listAuditEvents, exportAuditEvents] as const
