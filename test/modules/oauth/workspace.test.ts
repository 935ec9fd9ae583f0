import { describe, expect, test } from 'bun:test'
import { oauthApp, oauth, REDIRECT } from '../../helpers/oauth'
import { invited, sessionCaller, teamOf } from '../sso/team-setup'

/**
 * An OAuth grant names a workspace (issue 35): the consent page offers the person's workspaces, the
 * code and its tokens carry the one chosen, and the access token acts there as the person with their
 * role in it now, driven with oauth4webapi as a real client would.
 */
async function teamGrant(o: { role: 'viewer' | 'editor'; pick?: (ids: { team: string; owner: string }, fields: Record<string, string>) => Record<string, string> }) {
  const t = oauthApp()
  const owner = await t.signIn('owner@example.com')
  const team = await teamOf(t, owner.account.id, 'Research')
  const asOwner = await sessionCaller(t, owner.account.id)
  const teamNote = await asOwner('POST', '/v1/notes', { workspace: team, body: { content: 'The research team decided to publish in June.', title: 'Team plan' } })
  expect(teamNote.status).toBe(201)
  const ownNote = await asOwner('POST', '/v1/notes', { body: { content: 'My own shopping list.', title: 'Owner private' } })
  expect(ownNote.status).toBe(201)

  const user = await t.signIn('member@example.com')
  await invited(t, team, user.account.id, o.role)
  const mine = await sessionCaller(t, user.account.id)
  expect((await mine('POST', '/v1/notes', { body: { content: 'A note of my own.', title: 'Member private' } })).status).toBe(201)

  const as = await t.discover()
  const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Notes agent', scope: 'notes:read notes:write' })
  const client: oauth.Client = { client_id: reg.body.client_id, token_endpoint_auth_method: 'none' }
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const params = { client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }
  const page = await t.browse(t.authorizeUrl(params), { cookie: user.cookie })
  expect(page.status).toBe(200)
  const fields = t.formFields(page.text)
  const form = o.pick ? o.pick({ team, owner: owner.account.id }, fields) : { ...fields, workspace: team }
  const allowed = await t.browse('/oauth/authorize', { cookie: user.cookie, form: { ...form, decision: 'allow' } })
  const exchange = async () => {
    const callback = oauth.validateAuthResponse(as, client, new URL(allowed.location!), state)
    return oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), callback, REDIRECT, verifier, t.options))
  }
  return { t, team, owner, user, page, allowed, exchange, as, client }
}

const titles = (r: { body: any }) => (r.body.data as { title: string }[]).map(n => n.title).sort()

describe('OAuth grants name a workspace', () => {
  test('the consent page offers the person\'s workspaces, personal first and selected; with only their own, no picker', async () => {
    const { page, team, t } = await teamGrant({ role: 'viewer' })
    const options = [...page.text.matchAll(/<option value="([^"]+)"( selected)?>([^<]+)<\/option>/g)].map(m => [m[1] === team ? 'team' : 'personal', m[3], Boolean(m[2])])
    expect(options).toEqual([['personal', 'Personal (owner)', true], ['team', 'Research (viewer)', false]])
    expect(page.text).toContain('<select id="workspace" name="workspace">')
    const alone = await t.signIn('alone@example.com')
    const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
    const single = await t.browse(t.authorizeUrl({ client_id: reg.body.client_id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: 'A'.repeat(43), code_challenge_method: 'S256' }), { cookie: alone.cookie })
    expect(single.status).toBe(200)
    expect(single.text).not.toContain('<select')
    expect(single.text).toContain('Its charges are taken from your credits.')
  })

  test('consented for a team: the token lists the team\'s notes (not the person\'s own); refresh keeps the workspace', async () => {
    const { t, exchange, as, client, team } = await teamGrant({ role: 'editor' })
    const tokens = await exchange()
    const list = await t.call('GET', '/v1/notes', { token: tokens.access_token })
    expect(list.status).toBe(200)
    expect(titles(list)).toEqual(['Team plan'])
    // an editor's token writes in the team, as the person
    const made = await t.call('POST', '/v1/notes', { token: tokens.access_token, body: { content: 'Written by the agent for the team.', title: 'Agent note' } })
    expect(made.status).toBe(201)
    const stored = t.db.query<{ account_id: string }, [string]>('SELECT account_id FROM notes WHERE id = ?').get(made.body.id)!
    expect(stored.account_id).toBe(team)
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, t.options))
    expect(titles(await t.call('GET', '/v1/notes', { token: refreshed.access_token }))).toEqual(['Agent note', 'Team plan'])
    // the grant is in the team's audit log, by the person
    const granted = t.db.query<{ account_id: string; actor_id: string }, []>("SELECT account_id, actor_id FROM audit_events WHERE action = 'oauth.granted'").all()
    expect(granted).toEqual([{ account_id: team, actor_id: t.db.query<{ id: string }, []>("SELECT id FROM accounts WHERE email = 'member@example.com'").get()!.id }])
  })

  test('a viewer\'s token reads the team and is refused writing: 403 naming the role', async () => {
    const { t, exchange } = await teamGrant({ role: 'viewer' })
    const tokens = await exchange()
    expect(titles(await t.call('GET', '/v1/notes', { token: tokens.access_token }))).toEqual(['Team plan'])
    const write = await t.call('POST', '/v1/notes', { token: tokens.access_token, body: { content: 'Should not be written.' } })
    expect([write.status, write.body.error.code]).toEqual([403, 'insufficient_scope'])
    expect(write.body.error.message).toContain('Your role in this workspace is viewer; createNote needs editor')
  })

  test('no workspace picked: the personal one, as before workspaces', async () => {
    const { t, exchange } = await teamGrant({ role: 'editor', pick: (_ids, fields) => fields })
    expect(titles(await t.call('GET', '/v1/notes', { token: (await exchange()).access_token }))).toEqual(['Member private'])
  })

  test('a workspace the person is not in (another person\'s own, or none): 403 page, no code', async () => {
    for (const other of ['owner', 'acct_nobody'] as const) {
      let named = ''
      const { t, allowed } = await teamGrant({ role: 'editor', pick: (ids, fields) => ({ ...fields, workspace: (named = other === 'owner' ? ids.owner : other) }) })
      expect([allowed.status, allowed.location]).toEqual([403, null])
      expect(allowed.text).toContain(`You are not a member of the workspace ${named}`)
      expect(t.db.query('SELECT * FROM oauth_codes').all()).toEqual([])
    }
  })

  test('a person no longer a member: their token to the team is refused (401) and cannot be refreshed', async () => {
    const { t, exchange, as, client, team, user } = await teamGrant({ role: 'editor' })
    const tokens = await exchange()
    expect((await t.call('GET', '/v1/notes', { token: tokens.access_token })).status).toBe(200)
    // the membership row alone goes (removeMember also revokes the grants: the join must refuse them before that)
    await t.services.workspacesRepo.removeMember(team, user.account.id)
    const after = await t.call('GET', '/v1/notes', { token: tokens.access_token })
    expect([after.status, after.body?.error?.code]).toEqual([401, 'invalid_token'])
    const refresh = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, t.options)
    expect(refresh.status).toBe(400)
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('no longer a member of the workspace') })
  })
})
