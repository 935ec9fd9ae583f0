/**
 * The audit log's vocabulary (docs/decisions.md, "Audit log"): who did what, to what, when and from
 * where. An event never carries a secret (a key, a password, a token) or a note's text: ids, names of
 * settings and their values only.
 */

/** Who acted: a person signed in to the browser, an API key, an OAuth client's token, a sign-in through
 * the organisation's identity provider, the retention sweep, the operator at the command line. */
export type AuditActorType = 'user' | 'key' | 'oauth' | 'sso' | 'policy' | 'operator'

/** The events recorded. Add one here, then record it where it happens. */
export const AUDIT_ACTIONS = [
  'signin.succeeded',
  'signin.failed',
  'signout',
  'key.created',
  'key.revoked',
  'oauth.granted',
  'oauth.revoked',
  'note.media_read',
  'note.transcript_exported',
  'note.deleted',
  'note.media_deleted',
  'folder.deleted',
  'retention.changed',
  'plan.changed',
  'account.created',
  'audit.exported',
  'backup.created',
  'backup.restored',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export interface AuditActor {
  type: AuditActorType
  /** the account's user, the key's or token's id, the policy's name; null when unknown */
  id?: string | null
}

/** Where the request came from: the client's address and user agent (null outside HTTP). */
export interface AuditOrigin {
  ip?: string | null
  userAgent?: string | null
}

export interface AuditEventInput {
  /** the account whose data or settings the event concerns; null when none is known */
  accountId: string | null
  actor: AuditActor
  action: AuditAction
  target?: { type: string; id: string } | null
  origin?: AuditOrigin | null
  /** ids, setting names and values: never a secret, never transcript or summary text */
  details?: Record<string, string | number | boolean | null>
}

/** An event as stored and as the API returns it. */
export interface AuditEvent {
  id: string
  at: string
  accountId: string | null
  actor: { type: AuditActorType; id: string | null }
  action: AuditAction
  target: { type: string; id: string } | null
  ip: string | null
  userAgent: string | null
  details: Record<string, string | number | boolean | null>
}

/** Who did it and from where, as a route or the CLI knows it: handed to the service that records the event. */
export interface AuditBy {
  actor: AuditActor
  origin?: AuditOrigin | null
}

/** The operator at the command line: no address, no user agent. */
export const OPERATOR: AuditBy = { actor: { type: 'operator', id: null } }
