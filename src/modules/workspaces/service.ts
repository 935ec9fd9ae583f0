import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { ApiError } from '../../http/errors'
import { isScope, type Scope } from '../../http/contract'
import { actorOf, roleOf, type Principal } from '../../http/principal'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { AccountsService } from '../accounts/service'
import type { CreditsService } from '../credits/service'
import { grantPeriod, grantPeriodStart } from '../credits/model'
import { teamEmail } from './model'
import type { WorkspaceKeyRow, WorkspacesRepo, WorkspaceRow } from './repo'
import { isPersonalCredential, notTheCredentialsWorkspace, parseName, requireOwnWorkspace, requireRole, shownKind, shownName } from './checks'
import { createMembership, invitationView, memberView } from './membership'

export type WorkspacesService = ReturnType<typeof createWorkspacesService>

const keyView = (k: WorkspaceKeyRow) => ({
  id: k.id, name: k.name, start: k.start, sandbox: Number(k.sandbox) === 1, madeBy: k.made_by, madeByEmail: k.made_by_email,
  createdAt: k.created_at, lastUsedAt: k.last_used_at, revokedAt: k.revoked_at,
})

/**
 * An event written to another workspace's log than the credential's (a team made, a key made for it
 * from the personal workspace): the person as its actor, whom that workspace's members know, and the
 * credential that asked (a key of the person's own workspace) in its details.
 */
function inThePersonsName(p: Principal, by: AuditBy): { by: AuditBy; details: Record<string, string> } {
  return { by: { ...by, actor: { type: 'user', id: actorOf(p) } }, details: by.actor.type === 'key' && by.actor.id ? { credential: by.actor.id } : {} }
}

/**
 * Workspaces (docs/decisions.md "Workspaces"): the person's list, team workspaces made and renamed,
 * what an admin sees of one, its keys, and its membership (membership.ts). The person is always
 * `actorOf(principal)`; the workspace an operation names must be the credential's (`principal.accountId`),
 * but for createKey from a personal credential (keyWorkspaceOf).
 */
export function createWorkspacesService(deps: {
  repo: WorkspacesRepo
  accounts: Pick<AccountsService, 'accountOfEmail' | 'emailOf' | 'forgetVerifiedKeys' | 'createWorkspaceKey' | 'revokeKeyOf'>
  credits: Pick<CreditsService, 'balance' | 'spentThisPeriod'>
  audit: Pick<AuditService, 'recordBy'>
  clock: Clock
  ids: IdGenerator
  publicUrl: string
}) {
  const { repo, clock, ids, audit } = deps
  const membership = createMembership(deps)

  async function workspaceOf(p: Principal, id: string): Promise<WorkspaceRow> {
    requireOwnWorkspace(p, id)
    const ws = await repo.findWorkspace(id)
    if (!ws) throw new ApiError('not_found', `No workspace ${id}; list yours with GET /v1/workspaces.`)
    return ws
  }

  /**
   * createKey's workspace: the credential's own, or, for a credential of the person's personal workspace,
   * any workspace the person is a member of (how an API-only person starts working in a team); else the
   * 404 an unknown id gets.
   */
  async function keyWorkspaceOf(p: Principal, id: string): Promise<WorkspaceRow> {
    if (id === p.accountId || !isPersonalCredential(p)) return workspaceOf(p, id)
    const ws = (await repo.roleOf(id, actorOf(p))) ? await repo.findWorkspace(id) : null
    if (!ws) throw notTheCredentialsWorkspace(id)
    return ws
  }

  /** the scopes a new key asks for: known ones the credential itself holds (a key cannot widen its maker's) */
  function keyScopes(p: Principal, asked: string[] | undefined): Scope[] {
    if (!asked || asked.length === 0) return [...p.scopes]
    const unknown = asked.filter(s => !isScope(s))
    if (unknown.length) {
      throw new ApiError('invalid_request', `unknown scope ${unknown.join(', ')}; choose from the scopes GET /v1 lists.`, { details: [{ field: 'scopes', issue: `unknown: ${unknown.join(', ')}` }] })
    }
    const beyond = asked.filter(s => !p.scopes.has(s as Scope))
    if (beyond.length) throw new ApiError('insufficient_scope', `This credential lacks ${beyond.join(', ')}, so it cannot make a key that has them; ask for fewer scopes, or make the key in the browser.`)
    return [...new Set(asked)] as Scope[]
  }

  return {
    async list(p: Principal) {
      const rows = await repo.membershipsOf(actorOf(p))
      return { data: rows.map(r => ({ id: r.id, name: shownName(r), kind: shownKind(r), role: r.role, current: r.id === p.accountId })) }
    },

    /** A team workspace, its pooled balance starting in this grant period, with the person as its owner. */
    async create(p: Principal, body: { name: string }, by: AuditBy) {
      const name = parseName(body.name)
      const person = actorOf(p)
      const at = clock.now()
      const id = ids.next('acct')
      await repo.transaction(async () => {
        await repo.insertTeam({ id, name, email: teamEmail(id), plan: 'free', grant_period: grantPeriod(at), created_at: at.toISOString() })
        await repo.addMember({ workspace_id: id, account_id: person, role: 'owner', via: 'created', added_at: at.toISOString() })
        const named = inThePersonsName(p, by)
        await audit.recordBy(named.by, { accountId: id, action: 'workspace.created', target: { type: 'workspace', id }, details: { name, ...named.details } })
      })
      return { id, name, kind: 'team' as const, role: 'owner' as const, current: false }
    },

    /** What an admin sees: members, open invitations, keys, this month's usage per member, SSO group mappings. */
    async get(p: Principal, id: string) {
      const ws = await workspaceOf(p, id)
      const at = clock.now()
      const members = ws.kind === 'team'
        ? (await repo.members(id)).map(memberView)
        : [{ accountId: id, email: (await deps.accounts.emailOf(id)) ?? '', role: 'owner' as const, via: 'created', addedAt: ws.created_at, lastActiveAt: null }]
      const nowIso = at.toISOString()
      const invitations = (await repo.invitations(id)).filter(i => !i.accepted_at && !i.revoked_at && i.expires_at > nowIso).map(invitationView)
      const emails = new Map(members.map(m => [m.accountId, m.email]))
      const byActor = await repo.creditsByActor(id, grantPeriodStart(at).toISOString())
      return {
        id, name: shownName(ws), kind: shownKind(ws), role: roleOf(p),
        members,
        invitations,
        keys: (await repo.keysOf(id)).map(keyView),
        usage: {
          balance: await deps.credits.balance(id, at),
          creditsThisMonth: await deps.credits.spentThisPeriod(id, at),
          byMember: byActor.map(a => ({ accountId: a.actorId, email: a.actorId ? emails.get(a.actorId) ?? null : null, credits: a.credits })),
        },
        ssoGroups: (await repo.groupMappings(id)).map(g => ({ group: g.group_name, role: g.role })),
      }
    },

    async rename(p: Principal, id: string, body: { name: string }, by: AuditBy) {
      const ws = await workspaceOf(p, id)
      if (ws.kind !== 'team') throw new ApiError('conflict', 'Your personal workspace is always called "Personal"; rename a team workspace instead.')
      const name = parseName(body.name)
      if (name !== ws.name) {
        await repo.transaction(async () => {
          await repo.renameTeam(id, name)
          await audit.recordBy(by, { accountId: id, action: 'workspace.renamed', target: { type: 'workspace', id }, details: { from: ws.name, to: name } })
        })
      }
      return { id, name, kind: 'team' as const, role: roleOf(p), current: true }
    },

    /**
     * A key of the workspace for the caller's person (a personal workspace's: a personal key); shown once.
     * Made from the personal workspace for another, its event in that workspace's log names the person
     * (whose emails its members see), with the personal key that asked in its details.
     */
    async createKey(p: Principal, id: string, body: { name?: string; sandbox?: boolean; scopes?: string[] }, by: AuditBy) {
      const ws = await keyWorkspaceOf(p, id)
      const scopes = keyScopes(p, body.scopes)
      const sandbox = body.sandbox ?? p.sandbox
      if (p.sandbox && !sandbox) throw new ApiError('insufficient_scope', 'A sandbox credential makes sandbox keys only; send "sandbox": true, or make a live key with a live credential.')
      const madeBy = ws.kind === 'team' ? actorOf(p) : null
      const named = id === p.accountId ? { by, details: {} } : inThePersonsName(p, by)
      const { key, info } = await deps.accounts.createWorkspaceKey(id, madeBy, { name: body.name?.trim() || undefined, sandbox, scopes }, named.by, named.details)
      return { id: info.id, name: info.name, start: info.start, key, sandbox: info.sandbox, scopes: info.scopes, createdAt: info.createdAt }
    },

    /** Revokes a key of the workspace: an admin any, a member their own. */
    async revokeKey(p: Principal, id: string, keyId: string, by: AuditBy): Promise<void> {
      await workspaceOf(p, id)
      const key = await repo.keyOf(id, keyId)
      if (!key) throw new ApiError('not_found', `No key ${keyId} in this workspace; GET /v1/workspaces/${id} lists its keys.`)
      if (key.made_by !== actorOf(p)) requireRole(p, 'admin', 'revokeWorkspaceKey', ' (of another member\'s key)')
      await deps.accounts.revokeKeyOf(id, keyId, by)
    },

    invite: membership.invite,
    revokeInvitation: membership.revokeInvitation,
    accept: membership.accept,
    changeRole: membership.changeRole,
    remove: membership.remove,
  }
}
