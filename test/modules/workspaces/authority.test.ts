import { describe, expect, test } from 'bun:test'
import { sha256 } from '../../../src/crypto/digest'
import { teamEmail } from '../../../src/modules/workspaces/model'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

/**
 * Who may change who is in a workspace (issue 35, found by a review): not an application acting for a
 * member (an OAuth access token), whatever its scopes; not an admin through a back door (an SSO mapping
 * to owner, an invitation that outlives its sender's authority); and a team made on the free plan
 * brings no free grant of its own.
 */
for (const b of backEnds) describe.skipIf(b.skip)(`a workspace's authority on ${b.name}`, () => {
  const open = closingAfterEach(b)
  const app = async () => createTestApp({ store: await open(), env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })

  /** A team with its owner and an admin, each with a key of the team. */
  async function ownerAndAdmin(t: Awaited<ReturnType<typeof app>>) {
    const ws = await teamWorkspace(t, 'Research')
    const owner = await person(t, 'owner@example.com')
    const ownerKey = await memberKey(t, ws, owner.id, 'owner')
    const admin = await person(t, 'admin@example.com')
    const adminKey = await memberKey(t, ws, admin.id, 'admin')
    return { ws, owner, ownerKey, admin, adminKey }
  }

  /** An OAuth access token of an app the person granted notes:read notes:write in workspace `ws` (rows as the token endpoint writes them). */
  async function appToken(t: Awaited<ReturnType<typeof app>>, personId: string, ws: string): Promise<string> {
    const now = new Date().toISOString()
    const later = new Date(Date.now() + 3_600_000).toISOString()
    await t.store.run("INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, scope, created_at) VALUES ('cli_app', NULL, 'An app', '[]', 'none', 'notes:read notes:write', ?)", [now])
    const token = `oat_${'a'.repeat(40)}`
    await t.store.run("INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, account_id, scope, created_at, expires_at, workspace_id) VALUES ('tok_app', ?, 'access', 'fam_app', 'cli_app', ?, 'notes:read notes:write', ?, ?, ?)", [sha256(token), personId, now, later, ws])
    return token
  }

  test('an OAuth token of an admin reads the workspace\'s notes but cannot make keys, invite, change roles, remove, map groups or move a note: 403, nothing made', async () => {
    const t = await app()
    const ws = await teamWorkspace(t, 'Research')
    const admin = await person(t, 'admin@example.com')
    const adminKey = await memberKey(t, ws, admin.id, 'admin')
    const viewer = await person(t, 'viewer@example.com')
    await memberKey(t, ws, viewer.id, 'viewer')
    const note = await t.call('POST', '/v1/notes', { token: admin.personalKey, body: { title: 'Private', content: 'Only mine.' } })
    const token = await appToken(t, admin.id, ws)
    expect((await t.call('GET', '/v1/notes', { token })).status).toBe(200)
    const tried = {
      createWorkspaceKey: await t.call('POST', `/v1/workspaces/${ws}/keys`, { token, body: {} }),
      inviteMember: await t.call('POST', `/v1/workspaces/${ws}/invitations`, { token, body: { email: 'outsider@example.com', role: 'admin' } }),
      changeMemberRole: await t.call('PATCH', `/v1/workspaces/${ws}/members/${viewer.id}`, { token, body: { role: 'admin' } }),
      removeMember: await t.call('DELETE', `/v1/workspaces/${ws}/members/${viewer.id}`, { token }),
      setSsoGroups: await t.call('PUT', `/v1/workspaces/${ws}/sso-groups`, { token, body: { mappings: [{ group: 'all', role: 'admin' }] } }),
      createWorkspace: await t.call('POST', '/v1/workspaces', { token, body: { name: 'Farm' } }),
    }
    for (const [id, r] of Object.entries(tried)) {
      expect({ id, status: r.status, code: r.body?.error?.code }).toEqual({ id, status: 403, code: 'insufficient_scope' })
      expect(r.body.error.message).toContain('OAuth access token or ID token')
    }
    // an app granted the person's personal workspace cannot push a private note into the team
    const personalToken = `oat_${'b'.repeat(40)}`
    const now = new Date().toISOString()
    await t.store.run("INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, account_id, scope, created_at, expires_at, workspace_id) VALUES ('tok_own', ?, 'access', 'fam_own', 'cli_app', ?, 'notes:read notes:write', ?, ?, NULL)", [sha256(personalToken), admin.id, now, new Date(Date.now() + 3_600_000).toISOString()])
    const moved = await t.call('POST', `/v1/notes/${note.body.id}/move`, { token: personalToken, body: { workspaceId: ws } })
    expect([moved.status, moved.body.error.code]).toEqual([403, 'insufficient_scope'])
    // nothing made: the team's keys (the admin's and the viewer's only), no invitation, the viewer still a viewer, the note still private
    const detail = (await t.call('GET', `/v1/workspaces/${ws}`, { token: adminKey })).body
    expect({ keys: detail.keys.length, invitations: detail.invitations.length, viewer: detail.members.find((m: any) => m.accountId === viewer.id)?.role, groups: detail.ssoGroups })
      .toEqual({ keys: 2, invitations: 0, viewer: 'viewer', groups: [] })
    expect((await t.call('GET', `/v1/notes/${note.body.id}`, { token: admin.personalKey })).status).toBe(200)
  })

  test('an admin cannot drop a group mapped to owner (its owners would leave at their next sign-in); an owner can', async () => {
    const t = await app()
    const { ws, ownerKey, adminKey } = await ownerAndAdmin(t)
    expect((await t.call('PUT', `/v1/workspaces/${ws}/sso-groups`, { token: ownerKey, body: { mappings: [{ group: 'leads', role: 'owner' }, { group: 'eng', role: 'editor' }] } })).status).toBe(200)
    const dropped = await t.call('PUT', `/v1/workspaces/${ws}/sso-groups`, { token: adminKey, body: { mappings: [{ group: 'eng', role: 'editor' }] } })
    expect([dropped.status, dropped.body.error.code]).toEqual([403, 'insufficient_scope'])
    expect(dropped.body.error.message).toContain('Your role in this workspace is admin; dropping a group mapped to owner needs owner.')
    expect((await t.call('GET', `/v1/workspaces/${ws}`, { token: ownerKey })).body.ssoGroups).toEqual([{ group: 'eng', role: 'editor' }, { group: 'leads', role: 'owner' }])
    expect((await t.call('PUT', `/v1/workspaces/${ws}/sso-groups`, { token: ownerKey, body: { mappings: [{ group: 'eng', role: 'editor' }] } })).status).toBe(200)
  })

  test('the open invitations an admin sent end when they are removed or no longer administer', async () => {
    const t = await app()
    const { ws, ownerKey, admin, adminKey } = await ownerAndAdmin(t)
    const alt = await person(t, 'alt@example.com')
    const other = await person(t, 'other@example.com')
    const toAlt = await t.call('POST', `/v1/workspaces/${ws}/invitations`, { token: adminKey, body: { email: 'alt@example.com', role: 'admin' } })
    expect(toAlt.status).toBe(201)
    expect((await t.call('PATCH', `/v1/workspaces/${ws}/members/${admin.id}`, { token: ownerKey, body: { role: 'editor' } })).status).toBe(200)
    expect((await t.call('POST', '/v1/invitations/accept', { token: alt.personalKey, body: { token: toAlt.body.token } })).status).toBe(404)

    const admin2 = await person(t, 'admin2@example.com')
    const admin2Key = await memberKey(t, ws, admin2.id, 'admin')
    const toOther = await t.call('POST', `/v1/workspaces/${ws}/invitations`, { token: admin2Key, body: { email: 'other@example.com', role: 'viewer' } })
    expect((await t.call('DELETE', `/v1/workspaces/${ws}/members/${admin2.id}`, { token: ownerKey })).status).toBe(204)
    expect((await t.call('POST', '/v1/invitations/accept', { token: other.personalKey, body: { token: toOther.body.token } })).status).toBe(404)
    const roles = (await t.call('GET', `/v1/workspaces/${ws}`, { token: ownerKey })).body.members.map((m: any) => m.email).sort()
    expect(roles).toEqual(['admin@example.com', 'owner@example.com'])
  })

  test('an admin\'s change to a member who was made owner after it was first read (an owner\'s change racing it) is refused once the workspace is locked; nothing changed', async () => {
    const t = await app()
    const { ws, adminKey } = await ownerAndAdmin(t)
    const editor = await person(t, 'editor@example.com')
    await memberKey(t, ws, editor.id, 'editor')
    // the owner's promotion of the editor commits between the admin's request reading the editor and
    // its transaction (as another connection's would)
    const repo = t.services.workspacesRepo
    const transaction = repo.transaction
    const promotedFirst = () => {
      repo.transaction = async fn => {
        repo.transaction = transaction
        await repo.setRole(ws, editor.id, 'owner')
        return transaction(fn)
      }
    }
    promotedFirst()
    const demoted = await t.call('PATCH', `/v1/workspaces/${ws}/members/${editor.id}`, { token: adminKey, body: { role: 'viewer' } })
    expect([demoted.status, demoted.body.error?.code]).toEqual([403, 'insufficient_scope'])
    expect(demoted.body.error.message).toContain('needs owner')
    expect(await repo.roleOf(ws, editor.id)).toBe('owner')
    // the same for removing them
    await repo.setRole(ws, editor.id, 'editor')
    promotedFirst()
    const removed = await t.call('DELETE', `/v1/workspaces/${ws}/members/${editor.id}`, { token: adminKey })
    expect([removed.status, removed.body.error?.code]).toEqual([403, 'insufficient_scope'])
    expect(await repo.roleOf(ws, editor.id)).toBe('owner')
  })

  test('a team on the free plan has no grant of its own (one person making teams makes no credits); the pro plan or a top-up fund it', async () => {
    const t = await app()
    const owner = await person(t, 'owner@example.com')
    const made = await t.call('POST', '/v1/workspaces', { token: owner.personalKey, body: { name: 'Farm' } })
    const teamKey = await memberKey(t, made.body.id, (await person(t, 'member@example.com')).id, 'editor')
    const balance = async (k: string) => (await t.call('GET', '/v1/usage', { token: k })).body.balance
    expect([(await balance(teamKey)).grantTotal, (await balance(teamKey)).totalRemaining]).toEqual([0, 0])
    expect((await balance(owner.personalKey)).grantTotal).toBe(60)
    await t.services.accounts.setPlan(teamEmail(made.body.id), 'pro')
    expect((await balance(teamKey)).grantTotal).toBe(2000)
  })
})
