/**
 * The audit log's vocabulary (docs/decisions.md, "Audit log"): who did what, to what, when and from
 * where. An event never carries a secret (a key, a password, a token) or a note's text: ids, names of
 * settings and their values only.
 */

/** Who acted: a person signed in to the browser, an API key, an OAuth client's token, a sign-in through
 * the organisation's identity provider, the retention sweep, the operator at the command line, someone
 * without an account who opened a share link (its id). */
export type AuditActorType = 'user' | 'key' | 'oauth' | 'sso' | 'policy' | 'operator' | 'share'

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
  'note.transcript_edited',
  'note.deleted',
  'note.media_deleted',
  'folder.deleted',
  'share.created',
  'share.revoked',
  'share.opened',
  'retention.changed',
  'plan.changed',
  'account.created',
  'audit.exported',
  'backup.created',
  'backup.restored',
  // workspaces (docs/decisions.md "Workspaces"): recorded in the workspace's log, by the person
  'workspace.created',
  'workspace.renamed',
  'workspace.invitation_created',
  'workspace.invitation_revoked',
  'workspace.member_added',
  'workspace.role_changed',
  'workspace.member_removed',
  'workspace.key_created',
  'workspace.key_revoked',
  'workspace.sso_groups_set',
  'note.moved',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/**
 * The reads: counted, not repeated. One row per account, actor, action, target and client address in
 * each slot of READ_SLOT_MS of the clock, whose count and last time grow with each further read of the
 * slot (its user agent and details are the first read's). Every other action is one row per event,
 * never changed. Migration 19 names the same three in its trigger.
 */
export const READ_ACTIONS: readonly AuditAction[] = ['note.transcript_exported', 'note.media_read', 'audit.exported']

/** The reads' slot: ten minutes of the clock (00:00–00:10 UTC, 00:10–00:20, …). */
export const READ_SLOT_MS = 10 * 60_000

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
  /** when it happened; for a read, the first of the slot */
  at: string
  /** reads of the slot this event counts (1 for every other action) */
  count: number
  /** the last of them (`at` when count is 1) */
  lastAt: string
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
