/**
 * The roles a member holds in a workspace (docs/decisions.md "Workspaces"), beside the scopes
 * (scopes.ts): an operation declares the least role it needs, and admission checks it after the scopes.
 */
export const ROLES = ['viewer', 'editor', 'admin', 'owner'] as const
export type Role = (typeof ROLES)[number]

/** what each role may do, in the words the error messages and the documentation use */
export const ROLE_GRANTS: Record<Role, string> = {
  viewer: 'read, export and ask',
  editor: 'also write notes, folders, tags, speakers and edits',
  admin: 'also manage members, keys, retention, webhooks and the audit log',
  owner: 'also make and remove owners, and map groups to owner',
}

export const isRole = (s: unknown): s is Role => typeof s === 'string' && (ROLES as readonly string[]).includes(s)

/** true when `held` allows what `needed` allows (owner > admin > editor > viewer) */
export const roleAllows = (held: Role, needed: Role) => ROLES.indexOf(held) >= ROLES.indexOf(needed)

