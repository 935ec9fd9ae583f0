import { describe, expect, test } from 'bun:test'
import { sha256 } from '../../../src/crypto/digest'
import { createTestApp, expectEnvelope, type CallResult } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'

/** what a key made without `scopes` by `keys create` holds: every scope of the interface */
const EVERY_SCOPE = ['notes:read', 'notes:write', 'folders:read', 'folders:write', 'transcriptions:write', 'summaries:write', 'usage:read']

/**
 * A person who uses only the API (issue 36): their personal key makes a team (createWorkspace), then a
 * key for it (createWorkspaceKey on the team's id), and works there with that key. Nothing else crosses
 * workspaces: every other workspace operation still answers 404 for a workspace that is not the key's.
 */
for (const b of backEnds) describe.skipIf(b.skip)(`an API-only person in their team on ${b.name}`, () => {
  const open = closingAfterEach(b)
  const app = async () => createTestApp({ store: await open(), env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
  type App = Awaited<ReturnType<typeof app>>

  /** a person signed up with a key (`keys create`), with that key and its id */
  async function signUp(t: App, email: string, o: { scopes?: ('notes:read' | 'notes:write' | 'usage:read')[]; sandbox?: boolean } = {}) {
    const made = await t.services.accounts.createKey({ email, ...o })
    return { id: made.account.id, key: made.key, keyId: made.info.id }
  }

  /** a team made with the person's key, and a key for it made with the same key */
  async function teamOf(t: App, personalKey: string, name = 'Research') {
    const made = await t.call('POST', '/v1/workspaces', { token: personalKey, body: { name } })
    expect(made.status).toBe(201)
    const key = await t.call('POST', `/v1/workspaces/${made.body.id}/keys`, { token: personalKey, body: { name: 'team key' } })
    expect(key.status).toBe(201)
    return { id: made.body.id as string, key: key.body.key as string, keyId: key.body.id as string }
  }

  /** `email` invited by the team key as `role`, joining with their own personal key */
  async function join(t: App, teamKey: string, team: string, who: { key: string }, email: string, role: string) {
    const invited = await t.call('POST', `/v1/workspaces/${team}/invitations`, { token: teamKey, body: { email, role } })
    expect(invited.status).toBe(201)
    expect((await t.call('POST', '/v1/invitations/accept', { token: who.key, body: { token: invited.body.token } })).status).toBe(200)
  }

  const titles = async (t: App, key: string) => {
    const r = await t.call('GET', '/v1/notes', { token: key })
    expect(r.status).toBe(200)
    return r.body.data.map((n: { title: string }) => n.title)
  }
  const counts = async (t: App) => ({
    keys: Number((await t.store.get<{ n: number | string }>('SELECT count(*) AS n FROM api_keys'))!.n),
    audit: Number((await t.store.get<{ n: number | string }>('SELECT count(*) AS n FROM audit_events'))!.n),
  })
  /** an error answer with the workspace id it names taken out: what tells one 404 from another */
  const withoutId = (r: CallResult, id: string) => ({
    status: r.status, code: r.body.error.code, message: r.body.error.message.replaceAll(id, '<id>'), details: r.body.error.details,
  })

  test('sign-up key → createWorkspace → a key for the team made with the personal key → notes and invitations in the team', async () => {
    const t = await app()
    const alice = await signUp(t, 'alice@example.com')
    const made = await t.call('POST', '/v1/workspaces', { token: alice.key, body: { name: 'Research' } })
    expect([made.status, made.body]).toEqual([201, { id: made.body.id, name: 'Research', kind: 'team', role: 'owner', current: false }])
    const team = made.body.id as string
    // the personal key still works only in the personal workspace for everything but making a key
    expectEnvelope(await t.call('POST', `/v1/workspaces/${team}/invitations`, { token: alice.key, body: { email: 'bob@example.com', role: 'editor' } }), 404, 'not_found')
    expectEnvelope(await t.call('GET', `/v1/workspaces/${team}`, { token: alice.key }), 404, 'not_found')

    const teamKey = await t.call('POST', `/v1/workspaces/${team}/keys`, { token: alice.key, body: { name: 'laptop' } })
    expect(teamKey.status).toBe(201)
    expect(teamKey.body).toMatchObject({ name: 'laptop', sandbox: false, scopes: EVERY_SCOPE })
    expect(teamKey.body.key).toMatch(/^svc_live_/)
    const key = teamKey.body.key as string

    // the team's library: empty, then a note made with the team key, which the personal library does not have
    expect(await titles(t, key)).toEqual([])
    expect((await t.call('POST', '/v1/notes', { token: key, body: { title: 'Team plan', content: 'We meet on Tuesdays.' } })).status).toBe(201)
    expect(await titles(t, key)).toEqual(['Team plan'])
    expect(await titles(t, alice.key)).toEqual([])

    // the team key is the owner's: it invites, and the workspace lists it as made by Alice
    const invited = await t.call('POST', `/v1/workspaces/${team}/invitations`, { token: key, body: { email: 'bob@example.com', role: 'editor' } })
    expect([invited.status, invited.body.email, invited.body.role]).toEqual([201, 'bob@example.com', 'editor'])
    const detail = await t.call('GET', `/v1/workspaces/${team}`, { token: key })
    expect(detail.body.keys.map((k: { id: string; madeBy: string; madeByEmail: string }) => [k.id, k.madeBy, k.madeByEmail]))
      .toEqual([[teamKey.body.id, alice.id, 'alice@example.com']])

    // the team's log has the key's making, by Alice (the personal key that asked: in details); her personal log has none
    const log = await t.call('GET', '/v1/audit-events?action=workspace.key_created', { token: key })
    expect(log.body.data.map((e: any) => [e.accountId, e.actor, e.target, e.details])).toEqual([
      [team, { type: 'user', id: alice.id }, { type: 'key', id: teamKey.body.id }, { sandbox: false, scopes: EVERY_SCOPE.join(' '), credential: alice.keyId }],
    ])
    expect((await t.call('GET', '/v1/audit-events?action=workspace.key_created', { token: alice.key })).body.data).toEqual([])
    // so has the team's making: Alice, whom its members know, not a key of her personal workspace
    const createdLog = await t.call('GET', '/v1/audit-events?action=workspace.created', { token: key })
    expect(createdLog.body.data.map((e: any) => [e.actor, e.details])).toEqual([[{ type: 'user', id: alice.id }, { name: 'Research', credential: alice.keyId }]])

    // a sandbox personal key makes a sandbox key for the team, and no live one
    const sandbox = await signUp(t, 'alice@example.com', { sandbox: true })
    const sandboxKey = await t.call('POST', `/v1/workspaces/${team}/keys`, { token: sandbox.key, body: {} })
    expect([sandboxKey.status, sandboxKey.body.sandbox]).toEqual([201, true])
    expect(sandboxKey.body.key).toMatch(/^svc_test_/)
    expect(await titles(t, sandboxKey.body.key)).toEqual([])
    expectEnvelope(await t.call('POST', `/v1/workspaces/${team}/keys`, { token: sandbox.key, body: { sandbox: false } }), 403, 'insufficient_scope')
  })

  test('a person not in the team gets the 404 an unknown workspace gets; a viewer makes a viewer\'s key', async () => {
    const t = await app()
    const alice = await signUp(t, 'alice@example.com')
    const team = await teamOf(t, alice.key)
    const mallory = await signUp(t, 'mallory@example.com')
    const before = await counts(t)
    const notMember = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: mallory.key, body: {} })
    const unknown = await t.call('POST', '/v1/workspaces/acct_nosuchworkspace/keys', { token: mallory.key, body: {} })
    expectEnvelope(notMember, 404, 'not_found')
    expectEnvelope(unknown, 404, 'not_found')
    expect(withoutId(notMember, team.id)).toEqual(withoutId(unknown, 'acct_nosuchworkspace'))
    expect(await counts(t)).toEqual(before)

    const bob = await signUp(t, 'bob@example.com')
    await join(t, team.key, team.id, bob, 'bob@example.com', 'viewer')
    const bobKey = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: bob.key, body: {} })
    expect(bobKey.status).toBe(201)
    expect((await t.call('POST', '/v1/notes', { token: team.key, body: { title: 'Roadmap', content: 'Q3.' } })).status).toBe(201)
    expect(await titles(t, bobKey.body.key)).toEqual(['Roadmap'])
    const write = await t.call('POST', '/v1/notes', { token: bobKey.body.key, body: { title: 'Mine', content: 'x' } })
    expectEnvelope(write, 403, 'insufficient_scope')
    expect(write.body.error.message).toContain('Your role in this workspace is viewer')
    expect(await titles(t, bobKey.body.key)).toEqual(['Roadmap'])
  })

  test('scopes cannot grow, a team key stays in its team, an OAuth token makes no key', async () => {
    const t = await app()
    const alice = await signUp(t, 'alice@example.com')
    const team = await teamOf(t, alice.key)
    const before = await counts(t)
    // a read-only personal key: createWorkspaceKey needs notes:write
    const readOnly = await signUp(t, 'alice@example.com', { scopes: ['notes:read'] })
    const fromReadOnly = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: readOnly.key, body: { scopes: ['notes:read', 'notes:write'] } })
    expectEnvelope(fromReadOnly, 403, 'insufficient_scope')
    expect(fromReadOnly.body.error.message).toContain('notes:write')
    // a write-only personal key cannot make a key with usage:read, and by default makes one with its own scopes
    const writeOnly = await signUp(t, 'alice@example.com', { scopes: ['notes:write'] })
    const wider = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: writeOnly.key, body: { scopes: ['notes:write', 'usage:read'] } })
    expectEnvelope(wider, 403, 'insufficient_scope')
    expect(wider.body.error.message).toContain('lacks usage:read')
    const keysAfterRefusals = (await counts(t)).keys
    expect(keysAfterRefusals).toBe(before.keys + 2) // the two personal keys made above, nothing in the team
    const narrow = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: writeOnly.key, body: {} })
    expect([narrow.status, narrow.body.scopes]).toEqual([201, ['notes:write']])

    // a key made for one team makes no key for another of the person's workspaces
    const second = await t.call('POST', '/v1/workspaces', { token: alice.key, body: { name: 'Second' } })
    const crossing = await t.call('POST', `/v1/workspaces/${second.body.id}/keys`, { token: team.key, body: {} })
    expectEnvelope(crossing, 404, 'not_found')
    expectEnvelope(await t.call('POST', `/v1/workspaces/${alice.id}/keys`, { token: team.key, body: {} }), 404, 'not_found')

    // an OAuth access token of an app Alice granted her personal workspace
    const now = new Date().toISOString()
    await t.store.run("INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, scope, created_at) VALUES ('cli_app', NULL, 'An app', '[]', 'none', 'notes:read notes:write', ?)", [now])
    const token = `oat_${'a'.repeat(40)}`
    await t.store.run("INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, account_id, scope, created_at, expires_at, workspace_id) VALUES ('tok_app', ?, 'access', 'fam_app', 'cli_app', ?, 'notes:read notes:write', ?, ?, NULL)",
      [sha256(token), alice.id, now, new Date(Date.now() + 3_600_000).toISOString()])
    expect((await t.call('GET', '/v1/notes', { token })).status).toBe(200)
    const keysBefore = (await counts(t)).keys
    const fromApp = await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token, body: {} })
    expectEnvelope(fromApp, 403, 'insufficient_scope')
    expect(fromApp.body.error.message).toContain('OAuth access token or ID token')
    expect((await counts(t)).keys).toBe(keysBefore)
  })

  test('a removed member\'s key made with their personal key is refused on the next request', async () => {
    const t = await app()
    const alice = await signUp(t, 'alice@example.com')
    const team = await teamOf(t, alice.key)
    const bob = await signUp(t, 'bob@example.com')
    await join(t, team.key, team.id, bob, 'bob@example.com', 'editor')
    const bobKey = (await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: bob.key, body: {} })).body.key as string
    expect((await t.call('POST', '/v1/notes', { token: bobKey, body: { title: 'Bob\'s', content: 'x' } })).status).toBe(201)
    expect((await t.call('DELETE', `/v1/workspaces/${team.id}/members/${bob.id}`, { token: team.key })).status).toBe(204)
    expectEnvelope(await t.call('GET', '/v1/notes', { token: bobKey }), 401, 'invalid_token')
    // and he can make no new one: the team is no longer his
    expectEnvelope(await t.call('POST', `/v1/workspaces/${team.id}/keys`, { token: bob.key, body: {} }), 404, 'not_found')
    expect(await titles(t, team.key)).toEqual(['Bob\'s'])
    expect(await titles(t, bob.key)).toEqual([])
  })
})
