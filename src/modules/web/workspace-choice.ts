import type { Role } from '../workspaces/model'
import { cookieValue } from './sessions'

/**
 * The workspace the browser works in (docs/decisions.md "Workspaces in the browser"): its id in this
 * cookie, set by the header's switcher (POST SWITCH_PATH). HttpOnly: the library's script does not
 * read it but the `notesvc-workspace` meta tag of the page it runs in, so a page keeps the workspace it
 * was drawn for even when another tab switches.
 */
const WORKSPACE_COOKIE = 'notesvc_workspace'
export const SWITCH_PATH = '/workspace/switch'
/** the workspace page: members, invitations, keys, usage, group mappings (admins); a key and leaving (everyone) */
export const WORKSPACE_PAGE_PATH = '/settings/workspace'
/** the page an invitation's link opens: `/invitations/<token>` */
export const INVITATION_PATH = '/invitations'

export interface WorkspaceChoice {
  id: string
  /** "Personal" for the person's own */
  name: string
  kind: 'personal' | 'team'
  role: Role
}

export interface CurrentWorkspace {
  current: WorkspaceChoice
  /** the person's workspaces, the personal one first */
  all: WorkspaceChoice[]
}

/**
 * What the pages read of the workspaces (the workspaces module's repo, handed in by the composition
 * root as api-session.ts's role lookup is): the person's memberships, an invitation by its token's
 * hash, a workspace's row, a workspace's keys with their makers.
 */
export interface WorkspaceDirectory {
  membershipsOf(personId: string): Promise<{ id: string; name: string | null; kind: 'person' | 'team'; role: Role }[]>
  invitationByToken(tokenHash: string): Promise<{ workspace_id: string; email: string; role: string; expires_at: string; accepted_at: string | null; revoked_at: string | null } | null | undefined>
  findWorkspace(id: string): Promise<{ id: string; name: string | null; kind: 'person' | 'team' } | null | undefined>
  keysOf(workspaceId: string): Promise<{ id: string; made_by: string | null }[]>
}
export type MembershipLookup = Pick<WorkspaceDirectory, 'membershipsOf'>

/** The person's workspaces as the switcher lists them. */
export async function workspacesOf(repo: MembershipLookup, personId: string): Promise<WorkspaceChoice[]> {
  const rows = await repo.membershipsOf(personId)
  return rows.map(m => m.kind === 'team'
    ? { id: m.id, name: m.name ?? m.id, kind: 'team' as const, role: m.role }
    : { id: m.id, name: 'Personal', kind: 'personal' as const, role: m.role })
}

/**
 * The workspace a page of `personId` is drawn in: `wanted` (a query's), else the cookie's, when the
 * person is a member of it (asked of the database on every page, so a removed member is back in their
 * personal workspace at once); else the personal workspace.
 */
export async function currentWorkspace(repo: MembershipLookup, request: Request, personId: string, wanted?: string | null): Promise<CurrentWorkspace & { asked: boolean }> {
  const all = await workspacesOf(repo, personId)
  const want = wanted || cookieValue(request.headers.get('cookie'), WORKSPACE_COOKIE)
  const chosen = want ? all.find(w => w.id === want) : undefined
  const personal = all.find(w => w.id === personId) ?? { id: personId, name: 'Personal', kind: 'personal' as const, role: 'owner' as const }
  return { current: chosen ?? personal, all, asked: Boolean(want) && !chosen }
}

/** The Set-Cookie of the chosen workspace (a year; the membership is checked on each use anyway). */
export function workspaceCookie(id: string, secure: boolean): string {
  return `${WORKSPACE_COOKIE}=${encodeURIComponent(id)}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${365 * 24 * 3600}${secure ? '; Secure' : ''}`
}
