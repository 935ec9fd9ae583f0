import { randomBytes } from 'node:crypto'
import { sha256 } from '../../src/crypto/digest'
import { teamEmail, type Role } from '../../src/modules/workspaces/model'
import { grantPeriod } from '../../src/modules/credits/model'
import { createAccountsRepo } from '../../src/modules/accounts/repo'
import { ALL_SCOPES } from '../../src/http/scopes'
import type { createTestApp } from './app'

type TestApp = Pick<ReturnType<typeof createTestApp>, 'services' | 'store'>

/**
 * A team workspace made directly with the workspaces repo (as the workspace API's createWorkspace
 * does): its accounts row of kind team, on the free plan with this month's grant.
 */
export async function teamWorkspace(t: TestApp, name = 'Team'): Promise<string> {
  const id = `acct_team${randomBytes(6).toString('hex')}`
  const now = new Date()
  await t.services.workspacesRepo.insertTeam({ id, name, email: teamEmail(id), plan: 'free', grant_period: grantPeriod(now), created_at: now.toISOString() })
  return id
}

/** A person (their account, made through a personal key) and that personal key. */
export async function person(t: TestApp, email: string): Promise<{ id: string; personalKey: string }> {
  const made = await t.services.accounts.createKey({ email })
  return { id: made.account.id, personalKey: made.key }
}

/**
 * A person made a member of the workspace with `role`, and a key of the workspace made by them (an
 * `api_keys` row with `made_by`, as createWorkspaceKey writes it): it acts as them with their role.
 */
export async function memberKey(t: TestApp, workspaceId: string, personId: string, role: Role, o: { sandbox?: boolean } = {}): Promise<string> {
  await t.services.workspacesRepo.addMember({ workspace_id: workspaceId, account_id: personId, role, via: 'invitation', added_at: new Date().toISOString() })
  const prefix = o.sandbox ? 'svc_test_' : 'svc_live_'
  const key = prefix + randomBytes(24).toString('base64url').replace(/[-_]/g, 'x')
  await createAccountsRepo(t.store).insertKey({
    id: `key_${randomBytes(8).toString('hex')}`, account_id: workspaceId, name: `${role} key`, start: key.slice(0, prefix.length + 4), hash: sha256(key),
    sandbox: o.sandbox ? 1 : 0, scopes: ALL_SCOPES.join(' '), created_at: new Date().toISOString(), made_by: personId,
  })
  return key
}
