import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { sha256 } from '../../crypto/digest'
import { ApiError } from '../../http/errors'
import { actorOf, type Principal } from '../../http/principal'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { AccountsService } from '../accounts/service'
import { isReservedEmail, roleAllows, type Role } from './model'
import type { InvitationRow, MemberOfWorkspace, WorkspacesRepo, WorkspaceRow } from './repo'
import { parseRole, requireOwnWorkspace, requireRole, requireTeam, shownName } from './checks'

/** An invitation is open this long (contract: 7 days). */
const INVITATION_DAYS = 7
/** 32 random bytes (256 bits) as base64url: shown once, stored as its SHA-256. */
const newToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
const isEmail = (s: string) => /^[^\s@]+@[^\s@]+$/.test(s)

export interface MembershipDeps {
  repo: WorkspacesRepo
  accounts: Pick<AccountsService, 'accountOfEmail' | 'emailOf' | 'forgetVerifiedKeys'>
  audit: Pick<AuditService, 'recordBy'>
  clock: Clock
  ids: IdGenerator
  publicUrl: string
}

export const memberView = (m: MemberOfWorkspace) => ({ accountId: m.account_id, email: m.email, role: m.role, via: m.via, addedAt: m.added_at, lastActiveAt: m.last_active_at })
export const invitationView = (i: InvitationRow) => ({ id: i.id, email: i.email, role: i.role, createdAt: i.created_at, expiresAt: i.expires_at })

const invitationGone = () => new ApiError('not_found', 'This invitation is not open for you: it was used, revoked or has expired, or was made for another email address. Sign in with the email it was sent to, or ask an admin of the workspace for a new invitation.')
const lastOwner = () => new ApiError('conflict', 'This is the workspace\'s last owner: make another member owner first (PATCH /v1/workspaces/{id}/members/{accountId} with role owner), then try again.')

/**
 * Membership of team workspaces: invitations (made, revoked, accepted), roles changed, members removed
 * (or leaving). Every change and its audit event in one transaction; refusals write nothing.
 */
export function createMembership(deps: MembershipDeps) {
  const { repo, clock, ids, audit } = deps
  const now = () => clock.now().toISOString()

  async function teamOf(p: Principal, id: string, what: string): Promise<WorkspaceRow> {
    requireOwnWorkspace(p, id)
    const ws = await repo.findWorkspace(id)
    if (!ws) throw new ApiError('not_found', `No workspace ${id}; list yours with GET /v1/workspaces.`)
    requireTeam(ws, what)
    return ws
  }

  async function memberOf(workspaceId: string, accountId: string): Promise<MemberOfWorkspace> {
    const m = (await repo.members(workspaceId)).find(x => x.account_id === accountId)
    if (!m) throw new ApiError('not_found', `No member ${accountId} in this workspace; GET /v1/workspaces/${workspaceId} lists its members.`)
    return m
  }

  /**
   * Inside the change's transaction, with the workspace locked (two owners removing each other at once
   * on two connections would otherwise both see two owners): the member as they are now, which the
   * change is checked against again (an admin's change to a member made owner since it was first read:
   * 403, as an owner's change is an owner's; not for a member leaving); 409 when the member is its last owner.
   */
  async function lockedMember(p: Principal, workspaceId: string, accountId: string, roles: Role[] | 'leaving', operation: string): Promise<NonNullable<Awaited<ReturnType<WorkspacesRepo['member']>>>> {
    await repo.lockWorkspace(workspaceId)
    const current = await repo.member(workspaceId, accountId)
    if (!current) throw new ApiError('not_found', `No member ${accountId} in this workspace; GET /v1/workspaces/${workspaceId} lists its members.`)
    if (roles !== 'leaving') requireOwnerFor(p, [...roles, current.role as Role], operation)
    if (current.role === 'owner' && (await repo.countOwners(workspaceId)) <= 1) throw lastOwner()
    return current
  }

  /** only an owner makes, unmakes or removes an owner */
  function requireOwnerFor(p: Principal, roles: Role[], operation: string): void {
    if (roles.includes('owner')) requireRole(p, 'owner', operation, ' (to or from owner)')
  }

  return {
    async invite(p: Principal, id: string, body: { email: string; role: string }, by: AuditBy) {
      const ws = await teamOf(p, id, 'have invitations')
      const role = parseRole(body.role)
      requireOwnerFor(p, [role], 'inviteMember')
      const email = body.email.trim()
      if (!isEmail(email) || isReservedEmail(email)) {
        throw new ApiError('invalid_request', `email ${JSON.stringify(body.email)} is not a person's email address; send the address of the person to invite.`, { details: [{ field: 'email', issue: 'not an email address' }] })
      }
      const existing = await deps.accounts.accountOfEmail(email)
      if (existing && await repo.member(ws.id, existing.id)) {
        throw new ApiError('conflict', `${email} is already a member of this workspace; change their role instead (PATCH /v1/workspaces/${ws.id}/members/${existing.id}).`)
      }
      const token = newToken()
      const at = clock.now()
      const row = {
        id: ids.next('inv'), workspace_id: ws.id, email, role, token_hash: sha256(token), invited_by: actorOf(p),
        created_at: at.toISOString(), expires_at: new Date(at.getTime() + INVITATION_DAYS * 86_400_000).toISOString(),
      }
      await repo.transaction(async () => {
        await repo.insertInvitation(row)
        await audit.recordBy(by, { accountId: ws.id, action: 'workspace.invitation_created', target: { type: 'invitation', id: row.id }, details: { role } })
      })
      return { ...invitationView({ ...row, accepted_at: null, revoked_at: null }), token, acceptUrl: `${deps.publicUrl.replace(/\/+$/, '')}/invitations/${token}` }
    },

    async revokeInvitation(p: Principal, id: string, invitationId: string, by: AuditBy): Promise<void> {
      const ws = await teamOf(p, id, 'have invitations')
      await repo.transaction(async () => {
        if (!(await repo.revokeInvitation(ws.id, invitationId, now()))) {
          throw new ApiError('not_found', `No open invitation ${invitationId} in this workspace; GET /v1/workspaces/${ws.id} lists the open ones.`)
        }
        await audit.recordBy(by, { accountId: ws.id, action: 'workspace.invitation_revoked', target: { type: 'invitation', id: invitationId } })
      })
    },

    /** The credential's person joins with the invitation's role, if the invitation is open and names their email. */
    async accept(p: Principal, token: string, by: AuditBy) {
      const person = actorOf(p)
      const inv = await repo.invitationByToken(sha256(token))
      const email = await deps.accounts.emailOf(person)
      if (!inv || inv.accepted_at || inv.revoked_at || inv.expires_at <= now() || !email || email.toLowerCase() !== inv.email.toLowerCase()) throw invitationGone()
      if (await repo.roleOf(inv.workspace_id, person)) {
        throw new ApiError('conflict', 'You are already a member of this workspace; pick it in the workspace menu (GET /v1/workspaces lists yours).')
      }
      const ws = (await repo.findWorkspace(inv.workspace_id))!
      await repo.transaction(async () => {
        if (!(await repo.markAccepted(inv.id, now()))) throw invitationGone()
        await repo.addMember({ workspace_id: ws.id, account_id: person, role: inv.role, via: 'invitation', added_at: now() })
        await audit.recordBy(by, { accountId: ws.id, action: 'workspace.member_added', target: { type: 'account', id: person }, details: { via: 'invitation', role: inv.role } })
      })
      return { id: ws.id, name: shownName(ws), kind: 'team' as const, role: inv.role, current: ws.id === p.accountId }
    },

    async changeRole(p: Principal, id: string, accountId: string, body: { role: string }, by: AuditBy) {
      const ws = await teamOf(p, id, 'have roles changed')
      const role = parseRole(body.role)
      const member = await memberOf(ws.id, accountId)
      requireOwnerFor(p, [role, member.role], 'changeMemberRole')
      if (member.role === role) return memberView(member)
      const current = await repo.transaction(async () => {
        const current = await lockedMember(p, ws.id, accountId, [role], 'changeMemberRole')
        if (current.role === role) return current
        await repo.setRole(ws.id, accountId, role)
        // an invitation stands for its sender's authority: one who no longer administers has none to lend
        const invitationsRevoked = roleAllows(role, 'admin') ? 0 : await repo.revokeInvitationsBy(ws.id, accountId, now())
        await audit.recordBy(by, { accountId: ws.id, action: 'workspace.role_changed', target: { type: 'account', id: accountId }, details: { from: current.role, to: role, ...(invitationsRevoked ? { invitationsRevoked } : {}) } })
        return current
      })
      // a verified team key carries its maker's role: this node's keys act with the new one at once
      deps.accounts.forgetVerifiedKeys()
      return memberView({ ...member, ...current, role })
    },

    /**
     * A member removed (or leaving: `accountId` is the caller's person): their row, their team keys,
     * OAuth grants, open invitations, webhook endpoints and share links of the workspace, and the audit
     * event, in one transaction; their notes stay.
     */
    async remove(p: Principal, id: string, accountId: string, by: AuditBy): Promise<void> {
      const ws = await teamOf(p, id, 'lose its member')
      const self = accountId === actorOf(p)
      if (!self) requireRole(p, 'admin', 'removeMember', ' (of another member)')
      const member = await memberOf(ws.id, accountId)
      if (!self) requireOwnerFor(p, [member.role], 'removeMember')
      await repo.transaction(async () => {
        const current = await lockedMember(p, ws.id, accountId, self ? 'leaving' : [], 'removeMember')
        const at = now()
        await repo.removeMember(ws.id, accountId)
        const keys = await repo.revokeKeysOf(ws.id, accountId, at)
        const grants = await repo.revokeGrantsOf(ws.id, accountId, at)
        const invitations = await repo.revokeInvitationsBy(ws.id, accountId, at)
        // what sends the team's notes or events outside under their name ends with them too
        const webhooks = await repo.disableWebhooksOf(ws.id, accountId, at, 'the member who made it left the workspace')
        const shares = await repo.revokeSharesOf(ws.id, accountId, at)
        await audit.recordBy(by, { accountId: ws.id, action: 'workspace.member_removed', target: { type: 'account', id: accountId }, details: { keysRevoked: keys, grantsRevoked: grants, invitationsRevoked: invitations, webhooksDisabled: webhooks, sharesRevoked: shares, self, role: current.role } })
      })
      // this node's verified keys: a revoked key is refused on the very next request
      deps.accounts.forgetVerifiedKeys()
    },
  }
}
