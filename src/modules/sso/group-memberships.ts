import type { AuditService } from '../audit/service'
import type { AuditActor, AuditOrigin } from '../audit/model'
import { roleAllows, type MemberVia, type Role } from '../workspaces/model'

/**
 * What a sign-in's group sync needs of the workspaces' tables: the methods of the workspaces repo
 * (src/modules/workspaces/repo.ts), handed over by services.ts (a module reads another's tables only
 * through what it is handed).
 */
export interface SsoWorkspaceMembers {
  mappingsOfGroups(groups: readonly string[]): Promise<{ group_name: string; workspace_id: string; role: Role }[]>
  membershipsOf(accountId: string): Promise<{ id: string; kind: string }[]>
  member(workspaceId: string, accountId: string): Promise<{ role: Role; via: MemberVia } | null>
  countOwners(workspaceId: string): Promise<number>
  addMember(m: { workspace_id: string; account_id: string; role: Role; via: MemberVia; added_at: string }): Promise<boolean>
  setRole(workspaceId: string, accountId: string, role: Role): Promise<boolean>
  removeMember(workspaceId: string, accountId: string): Promise<boolean>
  revokeKeysOf(workspaceId: string, accountId: string, at: string): Promise<number>
  revokeGrantsOf(workspaceId: string, accountId: string, at: string): Promise<number>
  revokeInvitationsBy(workspaceId: string, inviter: string, at: string): Promise<number>
}

/** the highest role any of the person's groups maps each workspace to */
function wantedRoles(mappings: { workspace_id: string; role: Role }[]): Map<string, Role> {
  const wanted = new Map<string, Role>()
  for (const m of mappings) {
    const held = wanted.get(m.workspace_id)
    if (!held || roleAllows(m.role, held)) wanted.set(m.workspace_id, m.role)
  }
  return wanted
}

/**
 * The workspace memberships a person's groups at the provider give them, brought up to date at a
 * sign-in (docs/decisions.md "Workspaces"): each workspace a group of theirs maps is joined with the
 * mapping's role (via 'sso'), or an SSO membership raised to it; each SSO membership that no group of
 * theirs maps any more is removed, their keys of it and OAuth grants to it revoked. A membership from
 * an invitation (or the team's creation) is never touched, nor is a team's last owner removed. Runs in
 * the caller's transaction; every change is in the workspace's audit log, by `actor`.
 */
export async function syncGroupMemberships(deps: {
  workspaces: SsoWorkspaceMembers
  audit: Pick<AuditService, 'record'>
  accountId: string
  groups: readonly string[]
  actor: AuditActor
  origin: AuditOrigin | null
  at: string
}): Promise<void> {
  const { workspaces, audit, accountId, actor, origin, at } = deps
  const wanted = wantedRoles(await workspaces.mappingsOfGroups(deps.groups))
  const target = { type: 'account', id: accountId }
  for (const [workspaceId, role] of wanted) {
    if (workspaceId === accountId) continue
    const member = await workspaces.member(workspaceId, accountId)
    if (!member) {
      await workspaces.addMember({ workspace_id: workspaceId, account_id: accountId, role, via: 'sso', added_at: at })
      await audit.record({ accountId: workspaceId, actor, action: 'workspace.member_added', target, origin, details: { via: 'sso', role } })
    } else if (member.via === 'sso' && member.role !== role && roleAllows(role, member.role)) {
      await workspaces.setRole(workspaceId, accountId, role)
      await audit.record({ accountId: workspaceId, actor, action: 'workspace.role_changed', target, origin, details: { from: member.role, to: role, via: 'sso' } })
    }
  }
  for (const w of await workspaces.membershipsOf(accountId)) {
    if (w.kind !== 'team' || wanted.has(w.id)) continue
    const member = await workspaces.member(w.id, accountId)
    if (member?.via !== 'sso') continue
    // a team keeps an owner: the last one stays until another member is made owner
    if (member.role === 'owner' && (await workspaces.countOwners(w.id)) <= 1) continue
    await workspaces.removeMember(w.id, accountId)
    const keysRevoked = await workspaces.revokeKeysOf(w.id, accountId, at)
    const grantsRevoked = await workspaces.revokeGrantsOf(w.id, accountId, at)
    // and the invitations they sent, as a removal by an admin ends them (workspaces/membership.ts)
    await workspaces.revokeInvitationsBy(w.id, accountId, at)
    await audit.record({ accountId: w.id, actor, action: 'workspace.member_removed', target, origin, details: { keysRevoked, grantsRevoked, self: false, via: 'sso' } })
  }
}
