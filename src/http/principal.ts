import type { Role } from './roles'
import type { Scope } from './scopes'

export type CredentialSource = 'api_key' | 'oauth' | 'mcp'

/**
 * Who is calling: the workspace (`accountId`: a person's own account is their personal workspace, a
 * team's row its workspace), which of its two libraries, what the credential may do, and the person
 * acting with their role there (docs/decisions.md "Workspaces").
 */
export interface Principal {
  /** the workspace whose library the request works in */
  accountId: string
  sandbox: boolean
  scopes: Set<Scope>
  credentialId: string
  source: CredentialSource
  /** the person acting; absent = `accountId` (a person in their personal workspace) */
  actorId?: string
  /** the person's role in the workspace; absent = owner (a person in their personal workspace) */
  role?: Role
}

/** the person acting for a principal */
export const actorOf = (p: Pick<Principal, 'accountId' | 'actorId'>) => p.actorId ?? p.accountId
/** the team member behind a credential, for what they make in the team (null in a personal workspace: its person is its only member) */
export const madeBy = (p: Pick<Principal, 'accountId'> & Partial<Pick<Principal, 'actorId'>>): string | null => (p.actorId && p.actorId !== p.accountId ? p.actorId : null)
/** a principal's role in its workspace */
export const roleOf = (p: Pick<Principal, 'role'>): Role => p.role ?? 'owner'
