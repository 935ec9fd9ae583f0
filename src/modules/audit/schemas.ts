import { t } from 'elysia'
import { Integer, Nullable } from '../../http/schemas'
import { AUDIT_ACTIONS, READ_ACTIONS, READ_SLOT_MS } from './model'

/** The API's shapes of the audit log (GET /v1/audit-events, its JSON lines export). */
export const AuditEventSchema = t.Object(
  {
    id: t.String({ examples: ['aud_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
    at: t.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'], description: 'when it happened; for a read, the first read of its slot' }),
    lastAt: t.String({ format: 'date-time', examples: ['2026-11-22T10:07:31.250Z'], description: 'for a read, the last read of its slot; the same as `at` when `count` is 1' }),
    count: Integer({ minimum: 1, description: `how many times it happened: reads (${READ_ACTIONS.map(a => `\`${a}\``).join(', ')}) are counted in one event per account, actor, action, target and address in each ${READ_SLOT_MS / 60_000}-minute slot of the clock (from :00, :10, … UTC), whose \`count\` and \`lastAt\` grow with each further read (its \`userAgent\` and \`details\` are the first read's); every other event is 1` }),
    accountId: Nullable(t.String()),
    actor: t.Object({
      type: t.String({ description: '`user` (a person signed in to the browser), `key` (an API key), `oauth` (an OAuth client\'s token), `sso` (a sign-in through the identity provider), `policy` (the retention sweep), `operator` (the command line), `share` (someone without an account who opened a share link)' }),
      id: Nullable(t.String({ description: 'the account (user), the key\'s id (`key_…`), the token\'s id (`tok_…`), the policy\'s name, the share link\'s id (`shr_…`); null when unknown' })),
    }),
    action: t.String({ description: `one of ${AUDIT_ACTIONS.map(a => `\`${a}\``).join(', ')}` }),
    target: Nullable(t.Object({ type: t.String(), id: t.String() })),
    ip: Nullable(t.String({ description: 'the client\'s address as the server\'s socket saw it; `local` for an in-process request; null outside HTTP' })),
    userAgent: Nullable(t.String({ description: 'the request\'s User-Agent, at most 512 characters' })),
    details: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean(), t.Null()]), { description: 'ids, names and values of settings: never a secret or a note\'s text' }),
  },
  { title: 'AuditEvent', description: 'One security- or privacy-relevant event: who (actor), what (action, target), when (at) and from where (ip, userAgent); a read repeated within ten minutes is one event with its `count`.' },
)

export const AuditEventList = t.Object(
  {
    data: t.Array(AuditEventSchema),
    pagination: t.Object({
      limit: Integer(),
      hasMore: t.Boolean(),
      nextCursor: Nullable(t.String({ description: 'pass as `cursor` for the next (older) page; null on the last page' })),
    }),
  },
  { title: 'AuditEventList', description: 'A page of the account\'s audit events, newest first.' },
)

export const ListAuditEventsQuery = t.Object({
  limit: t.Optional(Integer({ minimum: 1, maximum: 100, default: 50, description: 'events per page: 1 to 100, default 50' })),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'the previous page\'s `pagination.nextCursor`' })),
  action: t.Optional(t.Union(AUDIT_ACTIONS.map(a => t.Literal(a)), { description: 'only events of this action' })),
  since: t.Optional(t.String({ format: 'date-time', error: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z', description: 'only events at or after this instant (ISO 8601)' })),
})

export const ExportAuditEventsQuery = t.Object({
  since: t.Optional(t.String({ format: 'date-time', error: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z', description: 'only events at or after this instant (ISO 8601)' })),
})
