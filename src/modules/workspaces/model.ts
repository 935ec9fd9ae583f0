/**
 * Workspaces (docs/decisions.md "Workspaces"). A workspace is an `accounts` row: a person's personal
 * workspace is the person's own account (its only owner), a team workspace a row of kind `team` whose
 * members hold roles. A library (`Library.accountId`) is a workspace's live or sandbox library.
 */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const
export type Role = (typeof ROLES)[number]

/** what each role may do, in the words the error messages and the documentation use */
export const ROLE_GRANTS: Record<Role, string> = {
  viewer: 'read, export and ask',
  editor: 'also write notes, folders, tags, speakers and edits',
  admin: 'also manage members, keys, retention, webhooks and the audit log',
  owner: 'also make owners and delete the workspace',
}

export const isRole = (s: unknown): s is Role => typeof s === 'string' && (ROLES as readonly string[]).includes(s)

/** true when `held` allows what `needed` allows (owner > admin > editor > viewer) */
export const roleAllows = (held: Role, needed: Role) => ROLES.indexOf(held) >= ROLES.indexOf(needed)

export type WorkspaceKind = 'personal' | 'team'
export type MemberVia = 'created' | 'invitation' | 'sso'

/** The email a team workspace's accounts row carries (the column is NOT NULL and unique); `.invalid` is reserved (RFC 2606), so no person signs up or in with it. */
export const teamEmail = (workspaceId: string) => `${workspaceId}@workspace.invalid`
export const isReservedEmail = (email: string) => /@workspace\.invalid$/i.test(email.trim())
