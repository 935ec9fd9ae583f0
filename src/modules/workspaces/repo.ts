import type { Store } from '../../db/store'
import type { MemberVia, Role } from './model'

export interface WorkspaceRow {
  id: string
  name: string
  kind: 'person' | 'team'
  created_at: string
}

export interface MemberRow {
  workspace_id: string
  account_id: string
  role: Role
  via: MemberVia
  added_at: string
  last_active_at: string | null
}

/** a member with the person's email */
export interface MemberOfWorkspace extends MemberRow {
  email: string
}

/** a workspace the person belongs to, with the person's role (the personal one: owner) */
export interface MembershipRow {
  id: string
  name: string | null
  kind: 'person' | 'team'
  role: Role
}

export interface InvitationRow {
  id: string
  workspace_id: string
  email: string
  role: Role
  token_hash: string
  invited_by: string | null
  created_at: string
  expires_at: string
  accepted_at: string | null
  revoked_at: string | null
}

export interface GroupMappingRow {
  group_name: string
  workspace_id: string
  role: Role
}

/** a key of a workspace with its maker's email (null for the workspace's own keys) */
export interface WorkspaceKeyRow {
  id: string
  name: string | null
  start: string
  sandbox: number
  made_by: string | null
  made_by_email: string | null
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export type WorkspacesRepo = ReturnType<typeof createWorkspacesRepo>

/**
 * The workspaces' own tables (migration 32): team rows of `accounts`, members, invitations and SSO
 * group mappings. Every statement names the workspace it reads or writes.
 */
export function createWorkspacesRepo(store: Store) {
  return {
    transaction: <T>(fn: () => Promise<T>) => store.transaction(fn),

    /** A team workspace's row (its pooled balance starts in `grantPeriod`, as a new account's does). */
    insertTeam: async (t: { id: string; name: string; email: string; plan: string; grant_period: string; created_at: string }) => {
      await store.run("INSERT INTO accounts (id, email, plan, grant_period, created_at, kind, name) VALUES (?, ?, ?, ?, ?, 'team', ?)",
        [t.id, t.email, t.plan, t.grant_period, t.created_at, t.name])
    },
    /** the workspace of an id: a team's row, or a person's (their personal workspace; `name` null) */
    findWorkspace: (id: string) => store.get<WorkspaceRow>('SELECT id, name, kind, created_at FROM accounts WHERE id = ?', [id]),
    renameTeam: async (id: string, name: string) => (await store.run("UPDATE accounts SET name = ? WHERE id = ? AND kind = 'team'", [name, id])) > 0,
    deleteTeam: async (id: string) => (await store.run("DELETE FROM accounts WHERE id = ? AND kind = 'team'", [id])) > 0,

    /**
     * Inside a transaction: the workspace's row locked until it ends (PostgreSQL: FOR UPDATE; SQLite
     * has one writer), so changes that count its owners run one after the other on every node.
     */
    lockWorkspace: async (id: string) => { await store.get(`SELECT id FROM accounts WHERE id = ?${store.sql.lock('update')}`, [id]) },
    /** the role of a person in a workspace: owner of their own, the member row's in a team, else null */
    async roleOf(workspaceId: string, accountId: string): Promise<Role | null> {
      if (workspaceId === accountId) return 'owner'
      const row = await store.get<{ role: Role }>('SELECT role FROM workspace_members WHERE workspace_id = ? AND account_id = ?', [workspaceId, accountId])
      return row?.role ?? null
    },
    /** the person's workspaces: the personal one first, then the teams by name */
    membershipsOf: (accountId: string) => store.all<MembershipRow>(
      `SELECT a.id, a.name, a.kind, 'owner' AS role FROM accounts a WHERE a.id = ?
       UNION ALL
       SELECT a.id, a.name, a.kind, m.role FROM workspace_members m JOIN accounts a ON a.id = m.workspace_id WHERE m.account_id = ?
       ORDER BY kind, name, id`, [accountId, accountId]),
    members: (workspaceId: string) => store.all<MemberOfWorkspace>(
      `SELECT m.*, a.email FROM workspace_members m JOIN accounts a ON a.id = m.account_id
       WHERE m.workspace_id = ? ORDER BY m.added_at, m.account_id`, [workspaceId]),
    member: (workspaceId: string, accountId: string) => store.get<MemberRow>(
      'SELECT * FROM workspace_members WHERE workspace_id = ? AND account_id = ?', [workspaceId, accountId]),
    countOwners: async (workspaceId: string) => Number((await store.get<{ n: number | string }>(
      "SELECT count(*) AS n FROM workspace_members WHERE workspace_id = ? AND role = 'owner'", [workspaceId]))!.n),
    /** adds a member, or changes the role of one already there; true when a row was added */
    addMember: async (m: Omit<MemberRow, 'last_active_at'>) =>
      (await store.run('INSERT INTO workspace_members (workspace_id, account_id, role, via, added_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
        [m.workspace_id, m.account_id, m.role, m.via, m.added_at])) > 0,
    setRole: async (workspaceId: string, accountId: string, role: Role) =>
      (await store.run('UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND account_id = ?', [role, workspaceId, accountId])) > 0,
    removeMember: async (workspaceId: string, accountId: string) =>
      (await store.run('DELETE FROM workspace_members WHERE workspace_id = ? AND account_id = ?', [workspaceId, accountId])) > 0,
    touchMember: async (workspaceId: string, accountId: string, at: string) => {
      await store.run('UPDATE workspace_members SET last_active_at = ? WHERE workspace_id = ? AND account_id = ?', [at, workspaceId, accountId])
    },
    /** a removed member's keys of the workspace, revoked; how many */
    revokeKeysOf: async (workspaceId: string, accountId: string, at: string) =>
      store.run('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND made_by = ? AND revoked_at IS NULL', [at, workspaceId, accountId]),
    /** a removed member's webhook endpoints of the workspace, disabled (why: `reason`); how many */
    disableWebhooksOf: async (workspaceId: string, accountId: string, at: string, reason: string) =>
      store.run('UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE account_id = ? AND made_by = ? AND disabled_at IS NULL', [at, reason, workspaceId, accountId]),
    /** a removed member's share links of the workspace's notes, revoked; how many */
    revokeSharesOf: async (workspaceId: string, accountId: string, at: string) =>
      store.run('UPDATE note_shares SET revoked_at = ? WHERE account_id = ? AND made_by = ? AND revoked_at IS NULL', [at, workspaceId, accountId]),
    /** a removed member's OAuth grants to the workspace, revoked; how many */
    revokeGrantsOf: async (workspaceId: string, accountId: string, at: string) =>
      store.run('UPDATE oauth_tokens SET revoked_at = ? WHERE workspace_id = ? AND account_id = ? AND revoked_at IS NULL', [at, workspaceId, accountId]),

    /** the workspace's keys, oldest first, with their makers' emails */
    keysOf: (workspaceId: string) => store.all<WorkspaceKeyRow>(
      `SELECT k.id, k.name, k.start, k.sandbox, k.made_by, a.email AS made_by_email, k.created_at, k.last_used_at, k.revoked_at
       FROM api_keys k LEFT JOIN accounts a ON a.id = k.made_by WHERE k.account_id = ? ORDER BY k.created_at, k.id`, [workspaceId]),
    keyOf: (workspaceId: string, keyId: string) => store.get<WorkspaceKeyRow>(
      'SELECT id, name, start, sandbox, made_by, NULL AS made_by_email, created_at, last_used_at, revoked_at FROM api_keys WHERE account_id = ? AND id = ?', [workspaceId, keyId]),
    /** credits the workspace's ledger holds per acting person since `since` (null: charges made before usage named its actor) */
    creditsByActor: async (workspaceId: string, since: string) => (await store.all<{ actor_id: string | null; credits: number | string | null }>(
      'SELECT actor_id, sum(credits) AS credits FROM usage WHERE account_id = ? AND created_at >= ? GROUP BY actor_id', [workspaceId, since]))
      .map(r => ({ actorId: r.actor_id, credits: Number(r.credits ?? 0) })),

    /** the open invitations a member sent, revoked (they leave, or no longer administer); how many */
    revokeInvitationsBy: async (workspaceId: string, inviter: string, at: string) =>
      store.run('UPDATE workspace_invitations SET revoked_at = ? WHERE workspace_id = ? AND invited_by = ? AND accepted_at IS NULL AND revoked_at IS NULL', [at, workspaceId, inviter]),
    insertInvitation: async (i: Omit<InvitationRow, 'accepted_at' | 'revoked_at'>) => {
      await store.run('INSERT INTO workspace_invitations (id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [i.id, i.workspace_id, i.email, i.role, i.token_hash, i.invited_by, i.created_at, i.expires_at])
    },
    invitations: (workspaceId: string) => store.all<InvitationRow>(
      'SELECT * FROM workspace_invitations WHERE workspace_id = ? ORDER BY created_at DESC, id', [workspaceId]),
    invitationByToken: (tokenHash: string) => store.get<InvitationRow>('SELECT * FROM workspace_invitations WHERE token_hash = ?', [tokenHash]),
    /** the open invitations of an email (any case) */
    invitationsFor: (email: string, now: string) => store.all<InvitationRow>(
      `SELECT * FROM workspace_invitations WHERE lower(email) = lower(?) AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?`, [email, now]),
    markAccepted: async (id: string, at: string) =>
      (await store.run('UPDATE workspace_invitations SET accepted_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL', [at, id])) > 0,
    revokeInvitation: async (workspaceId: string, id: string, at: string) =>
      (await store.run('UPDATE workspace_invitations SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND accepted_at IS NULL AND revoked_at IS NULL', [at, id, workspaceId])) > 0,

    groupMappings: (workspaceId: string) => store.all<GroupMappingRow>(
      'SELECT * FROM sso_group_workspaces WHERE workspace_id = ? ORDER BY group_name', [workspaceId]),
    /** the mappings of any of these groups (a sign-in's), across workspaces */
    mappingsOfGroups: (groups: readonly string[]) => groups.length === 0 ? Promise.resolve([]) : store.all<GroupMappingRow>(
      `SELECT * FROM sso_group_workspaces WHERE group_name IN (${groups.map(() => '?').join(', ')})`, [...groups]),
    /** every workspace some mapping names (so a sign-in can drop memberships whose group is gone) */
    mappedWorkspaces: async () => (await store.all<{ workspace_id: string }>('SELECT DISTINCT workspace_id FROM sso_group_workspaces')).map(r => r.workspace_id),
    replaceGroupMappings: async (workspaceId: string, rows: readonly { group: string; role: Role }[]) => {
      await store.run('DELETE FROM sso_group_workspaces WHERE workspace_id = ?', [workspaceId])
      for (const r of rows) await store.run('INSERT INTO sso_group_workspaces (group_name, workspace_id, role) VALUES (?, ?, ?)', [r.group, workspaceId, r.role])
    },
  }
}
