import { defineOperation } from '../../http/contract'
import { AuditEventList, AuditEventSchema, ExportAuditEventsQuery, ListAuditEventsQuery } from './schemas'

// The audit log is for the account's owner and their own tools, not for agents: not MCP tools.
const notATool = { tool: false } as const
const WHO = 'Readable by the account\'s own credentials: a live API key with `usage:read`, or the signed-in browser. OAuth access tokens, ID tokens of the identity provider and sandbox keys are refused with 403 `insufficient_scope`: the log shows where and how the owner works (addresses, user agents), which an application acting for them has no need to read.'

export const listAuditEvents = defineOperation({
  id: 'listAuditEvents', method: 'GET', path: '/v1/audit-events', tag: 'Audit',
  summary: 'The account\'s audit log',
  description: `The account's security- and privacy-relevant events, newest first: sign-ins (and failed ones), keys created and revoked, OAuth grants and revocations, recordings played, transcripts exported, notes and folders deleted, plan changes, exports of this log. Each says who (actor), what (action, target), when (at) and from where (ip, userAgent); never a secret or a note's text. Page with \`cursor\` = the previous page's \`pagination.nextCursor\`; filter with \`action\` and \`since\`. ${WHO}`,
  scopes: ['usage:read'], credits: 0,
  query: ListAuditEventsQuery,
  responses: { 200: AuditEventList },
  mcp: notATool,
})

export const exportAuditEvents = defineOperation({
  id: 'exportAuditEvents', method: 'GET', path: '/v1/audit-events/export', tag: 'Audit',
  summary: 'Export the audit log as JSON lines',
  description: `Every event of the account (from \`since\`, when given), oldest first, as JSON lines (\`application/x-ndjson\`): one AuditEvent per line, streamed, with a \`Content-Disposition\` file name. The export is itself recorded (\`audit.exported\`). ${WHO}`,
  scopes: ['usage:read'], credits: 0,
  query: ExportAuditEventsQuery,
  responses: { 200: AuditEventSchema },
  textResponses: ['application/x-ndjson'],
  mcp: notATool,
})

export const auditOperations = [listAuditEvents, exportAuditEvents] as const
