import type { createTestApp } from '../../helpers/app'
import type { Role } from '../../../src/modules/workspaces/model'

type TestApp = ReturnType<typeof createTestApp>

/**
 * A team workspace owned by `ownerId`, made with the workspaces repo as createWorkspace does (a team
 * row of accounts, its email `<id>@workspace.invalid`, the owner a member via 'created'): the
 * operation itself is another branch's (H1), so these tests set the team up underneath it.
 */
export async function teamOf(t: TestApp, ownerId: string, name: string): Promise<string> {
  const id = `acct_team${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
  const owner = await t.store.get<{ grant_period: string }>('SELECT grant_period FROM accounts WHERE id = ?', [ownerId])
  const at = new Date().toISOString()
  await t.services.workspacesRepo.insertTeam({ id, name, email: `${id}@workspace.invalid`, plan: 'pro', grant_period: owner!.grant_period, created_at: at })
  await t.services.workspacesRepo.addMember({ workspace_id: id, account_id: ownerId, role: 'owner', via: 'created', added_at: at })
  return id
}

/** `accountId` invited into `workspaceId` with `role` and accepted (the membership an invitation leaves). */
export async function invited(t: TestApp, workspaceId: string, accountId: string, role: Role): Promise<void> {
  await t.services.workspacesRepo.addMember({ workspace_id: workspaceId, account_id: accountId, role, via: 'invitation', added_at: new Date().toISOString() })
}

/**
 * A key for the team `workspaceId` acting as its member `accountId` (made_by), as createWorkspaceKey
 * (H1) makes one: made here as a personal key of the member, then given to the workspace.
 */
export async function teamKey(t: TestApp, workspaceId: string, email: string): Promise<string> {
  const { key, info, account } = await t.services.accounts.createKey({ email })
  await t.store.run('UPDATE api_keys SET account_id = ?, made_by = ? WHERE id = ?', [workspaceId, account.id, info.id])
  return key
}

/** A browser session of `accountId` as the library's script calls the API: cookie, CSRF token, and the workspace header. */
export async function sessionCaller(t: TestApp, accountId: string) {
  const s = await t.services.web.sessions.create(accountId)
  const cookie = s.setCookie.split(';')[0]!
  return (method: string, path: string, o: { workspace?: string; body?: unknown } = {}) =>
    t.call(method, path, { body: o.body, headers: { cookie, 'x-csrf-token': s.csrf, ...(o.workspace ? { 'x-notesvc-workspace': o.workspace } : {}) } })
}
