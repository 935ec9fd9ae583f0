/**
 * The workspace operations end to end (issue 35), on SQLite and PostgreSQL, through app.handle: a team
 * made, people invited and joining, keys made for the team by each, the library shared and isolated,
 * roles refused and changed, a member removed (their key refused on the next request), the audit log.
 * People act in the browser (session + CSRF token + X-Notesvc-Workspace), as the library's pages do.
 * Every refusal is checked to write nothing (row counts of the tables the operations write).
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { createTestApp, expectEnvelope, fixedClock, type CallResult } from '../../helpers/app'
import { cookieBrowser, field } from '../../helpers/web'
import type { Store } from '../../../src/db/store'

const PASSWORD = 'correct horse battery staple'
const OWNER = 'owner@team.test'
const EDITOR = 'Editor@Team.test'
const VIEWER = 'viewer@team.test'
const T0 = '2026-03-02T09:00:00.000Z'
/** the four roles, as the contract names them (the 400 must list them) */
const FOUR_ROLES = ['viewer', 'editor', 'admin', 'owner']

type App = ReturnType<typeof createTestApp>

/** A person signed in to the browser: calls the API as the library's pages do, in `workspace` when given. */
async function browserOf(t: App, email: string) {
  const b = cookieBrowser('http://localhost', r => t.app.handle(r))
  const r = await b.signIn(email, PASSWORD)
  expect(r.status).toBe(303)
  const csrf = field((await b.get('/settings')).text, 'csrf')!
  const accountId = (await t.services.accounts.accountOfEmail(email))!.id
  async function call(method: string, path: string, o: { body?: unknown; workspace?: string } = {}): Promise<CallResult> {
    const headers: Record<string, string> = {
      cookie: [...b.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'x-csrf-token': csrf, origin: 'http://localhost', 'user-agent': `browser of ${email}`,
    }
    if (o.workspace) headers['x-notesvc-workspace'] = o.workspace
    if (o.body !== undefined) headers['content-type'] = 'application/json'
    const res = await t.app.handle(new Request(`http://localhost${path}`, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) }))
    const text = await res.text()
    return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }
  }
  return { accountId, call }
}

/** the rows the workspace operations write: a refusal must leave every count as it was */
async function rowCounts(store: Store) {
  const count = async (sql: string) => Number((await store.get<{ n: number | string }>(sql))!.n)
  return {
    accounts: await count('SELECT count(*) AS n FROM accounts'),
    members: await count('SELECT count(*) AS n FROM workspace_members'),
    owners: await count("SELECT count(*) AS n FROM workspace_members WHERE role = 'owner'"),
    invitations: await count('SELECT count(*) AS n FROM workspace_invitations'),
    acceptedOrRevoked: await count('SELECT count(*) AS n FROM workspace_invitations WHERE accepted_at IS NOT NULL OR revoked_at IS NOT NULL'),
    keys: await count('SELECT count(*) AS n FROM api_keys'),
    revokedKeys: await count('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NOT NULL'),
    audit: await count('SELECT count(*) AS n FROM audit_events'),
  }
}

/** `refusal` answers `status`/`code` and writes nothing */
async function refusedWithoutWriting(store: Store, refusal: () => Promise<CallResult>, status: number, code: string): Promise<CallResult> {
  const before = await rowCounts(store)
  const res = await refusal()
  expectEnvelope(res, status, code)
  expect(await rowCounts(store)).toEqual(before)
  return res
}

for (const b of backEnds) {
  describe.skipIf(b.skip)(`workspace operations on ${b.name}`, () => {
    let store: Store
    let t: App
    const clock = fixedClock(T0)

    beforeEach(async () => {
      clock.set(T0)
      store = await b.open()
      t = createTestApp({ store, clock })
      for (const email of [OWNER, EDITOR, VIEWER]) await t.services.web.setPassword(email, PASSWORD)
    })
    afterEach(async () => { await store.close() })

    test('a team: made, joined, shared, isolated, roles enforced and changed, a member removed, all in its audit log', async () => {
      const owner = await browserOf(t, OWNER)
      const editor = await browserOf(t, EDITOR)
      const viewer = await browserOf(t, VIEWER)
      const ownerPersonalKey = await t.key({ email: OWNER })

      const created = await owner.call('POST', '/v1/workspaces', { body: { name: '  Research  ' } })
      expect(created.status).toBe(201)
      const team = created.body.id as string
      expect(created.body).toEqual({ id: team, name: 'Research', kind: 'team', role: 'owner', current: false })
      const listed = await t.call('GET', '/v1/workspaces', { token: ownerPersonalKey })
      expect(listed.body).toEqual({ data: [
        { id: owner.accountId, name: 'Personal', kind: 'personal', role: 'owner', current: true },
        { id: team, name: 'Research', kind: 'team', role: 'owner', current: false },
      ] })

      // invitations: shown once with a token of at least 128 bits and the page that accepts it
      const invite = (email: string, role: string) => owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email, role } })
      const forEditor = await invite(EDITOR.toLowerCase(), 'editor')
      expect(forEditor.status).toBe(201)
      expect(forEditor.body).toMatchObject({ email: EDITOR.toLowerCase(), role: 'editor', createdAt: T0, expiresAt: '2026-03-09T09:00:00.000Z' })
      expect(Buffer.from(forEditor.body.token, 'base64url').length).toBeGreaterThanOrEqual(16)
      expect(forEditor.body.acceptUrl).toBe(`http://localhost/invitations/${forEditor.body.token}`)
      const forViewer = await invite(VIEWER, 'viewer')
      expect(forViewer.status).toBe(201)

      // accepted by the person whose email it names (any case), once
      const accept = (who: typeof owner, token: string) => who.call('POST', '/v1/invitations/accept', { body: { token } })
      await refusedWithoutWriting(store, () => accept(viewer, forEditor.body.token), 404, 'not_found')
      expect((await accept(editor, forEditor.body.token)).body).toEqual({ id: team, name: 'Research', kind: 'team', role: 'editor', current: false })
      await refusedWithoutWriting(store, () => accept(editor, forEditor.body.token), 404, 'not_found')
      expect((await accept(viewer, forViewer.body.token)).status).toBe(200)
      expect((await viewer.call('GET', '/v1/workspaces')).body.data.map((w: { name: string; role: string }) => `${w.name}:${w.role}`)).toEqual(['Personal:owner', 'Research:viewer'])

      // each makes a key for the team
      const keyOf = async (who: typeof owner) => {
        const r = await who.call('POST', `/v1/workspaces/${team}/keys`, { workspace: team, body: { name: 'team key' } })
        expect(r.status).toBe(201)
        return r.body as { id: string; key: string }
      }
      const ownerKey = await keyOf(owner)
      const editorKey = await keyOf(editor)
      const viewerKey = await keyOf(viewer)

      // the editor writes in the team; the viewer reads it; the owner's personal library does not have it
      const folder = await t.call('POST', '/v1/folders', { token: editorKey.key, body: { name: 'Interviews' } })
      expect(folder.status).toBe(201)
      const note = await t.call('POST', '/v1/notes', { token: editorKey.key, body: { title: 'Kickoff', content: 'We start on Monday.', folderId: folder.body.id } })
      expect(note.status).toBe(201)
      const titles = async (token: string) => ((await t.call('GET', '/v1/notes', { token })).body.data as { title: string }[]).map(n => n.title)
      expect(await titles(viewerKey.key)).toEqual(['Kickoff'])
      expect(await titles(ownerPersonalKey)).toEqual([])

      // a viewer cannot write: the 403 names the role held and the one needed
      const write = await refusedWithoutWriting(store, () => t.call('POST', '/v1/notes', { token: viewerKey.key, body: { title: 'Mine', content: 'x' } }), 403, 'insufficient_scope')
      expect(write.body.error.message).toContain('viewer')
      expect(write.body.error.message).toContain('editor')
      // nor manage the workspace
      await refusedWithoutWriting(store, () => viewer.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: 'x@team.test', role: 'viewer' } }), 403, 'insufficient_scope')

      // roles: an unknown one lists the four; the last owner cannot be demoted
      const role = (who: typeof owner, member: string, r: string) => who.call('PATCH', `/v1/workspaces/${team}/members/${member}`, { workspace: team, body: { role: r } })
      const unknown = await refusedWithoutWriting(store, () => role(owner, editor.accountId, 'boss'), 400, 'invalid_request')
      for (const r of FOUR_ROLES) expect(unknown.body.error.message).toContain(r)
      const demote = await refusedWithoutWriting(store, () => role(owner, owner.accountId, 'admin'), 409, 'conflict')
      expect(demote.body.error.message).toContain('make another member owner first')
      await refusedWithoutWriting(store, () => owner.call('DELETE', `/v1/workspaces/${team}/members/${owner.accountId}`, { workspace: team }), 409, 'conflict')
      // an editor made admin sees the workspace, which as an editor they could not
      expectEnvelope(await t.call('GET', `/v1/workspaces/${team}`, { token: editorKey.key }), 403, 'insufficient_scope')
      expect((await role(owner, editor.accountId, 'admin')).body).toMatchObject({ accountId: editor.accountId, role: 'admin', via: 'invitation' })
      const seen = await t.call('GET', `/v1/workspaces/${team}`, { token: editorKey.key })
      expect(seen.status).toBe(200)
      // last active: when each last used a team key or the browser in the team (the owner: the browser, at T0)
      expect(seen.body.members.map((m: { email: string; role: string; lastActiveAt: string | null }) => [m.email, m.role, m.lastActiveAt]))
        .toEqual([[OWNER, 'owner', T0], [EDITOR, 'admin', T0], [VIEWER, 'viewer', T0]])
      expect(seen.body.keys.map((k: { id: string; madeByEmail: string }) => `${k.id}:${k.madeByEmail}`)).toEqual([`${ownerKey.id}:${OWNER}`, `${editorKey.id}:${EDITOR}`, `${viewerKey.id}:${VIEWER}`])

      // removed: their team key refused on the very next request; their note stays for the others
      expect((await owner.call('DELETE', `/v1/workspaces/${team}/members/${editor.accountId}`, { workspace: team })).status).toBe(204)
      expectEnvelope(await t.call('GET', '/v1/notes', { token: editorKey.key }), 401, 'invalid_token')
      expect(await titles(viewerKey.key)).toEqual(['Kickoff'])
      expectEnvelope(await editor.call('GET', '/v1/notes', { workspace: team }), 403, 'insufficient_scope')
      // the owner's page shows the removed member gone and their key revoked (the others' keys live)
      const after = (await t.call('GET', `/v1/workspaces/${team}`, { token: ownerKey.key })).body
      expect(after.members.map((m: { email: string }) => m.email)).toEqual([OWNER, VIEWER])
      expect(after.keys.map((k: { id: string; revokedAt: string | null }) => [k.id, k.revokedAt])).toEqual([[ownerKey.id, null], [editorKey.id, T0], [viewerKey.id, null]])

      // the team's audit log, read with the owner's team key: each event by the person who did it
      const log = await t.call('GET', '/v1/audit-events?limit=100', { token: ownerKey.key })
      expect(log.status).toBe(200)
      const events = (log.body.data as { action: string; actor: { type: string; id: string }; details: Record<string, unknown> }[]).reverse()
      const membership = events.filter(e => e.action.startsWith('workspace.') && e.action !== 'workspace.key_created')
      expect(membership.map(e => [e.action, e.actor])).toEqual([
        ['workspace.created', { type: 'user', id: owner.accountId }],
        ['workspace.invitation_created', { type: 'user', id: owner.accountId }],
        ['workspace.invitation_created', { type: 'user', id: owner.accountId }],
        ['workspace.member_added', { type: 'user', id: editor.accountId }],
        ['workspace.member_added', { type: 'user', id: viewer.accountId }],
        ['workspace.role_changed', { type: 'user', id: owner.accountId }],
        ['workspace.member_removed', { type: 'user', id: owner.accountId }],
      ])
      expect(membership.find(e => e.action === 'workspace.role_changed')!.details).toEqual({ from: 'editor', to: 'admin' })
      expect(membership.find(e => e.action === 'workspace.member_removed')!.details).toMatchObject({ keysRevoked: 1, self: false })
      expect(events.filter(e => e.action === 'workspace.key_created').map(e => e.actor.id)).toEqual([owner.accountId, editor.accountId, viewer.accountId])
    }, 30_000)

    test('names, emails and workspaces that are refused write nothing', async () => {
      const owner = await browserOf(t, OWNER)
      const team = (await owner.call('POST', '/v1/workspaces', { body: { name: 'Ops' } })).body.id as string
      for (const name of ['', '   ', 'x'.repeat(101), 'line\nbreak', 'bell\u0007']) {
        await refusedWithoutWriting(store, () => owner.call('POST', '/v1/workspaces', { body: { name } }), 400, 'invalid_request')
        await refusedWithoutWriting(store, () => owner.call('PATCH', `/v1/workspaces/${team}`, { workspace: team, body: { name } }), 400, 'invalid_request')
      }
      // the credential's workspace only: the personal browser naming the team is not found
      await refusedWithoutWriting(store, () => owner.call('POST', `/v1/workspaces/${team}/invitations`, { body: { email: VIEWER, role: 'viewer' } }), 404, 'not_found')
      await refusedWithoutWriting(store, () => owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: VIEWER, role: 'chief' } }), 400, 'invalid_request')
      await refusedWithoutWriting(store, () => owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: `${team}@workspace.invalid`, role: 'viewer' } }), 400, 'invalid_request')
      await refusedWithoutWriting(store, () => owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: OWNER, role: 'viewer' } }), 409, 'conflict')
      // a personal workspace has no members to invite, and keeps its name
      await refusedWithoutWriting(store, () => owner.call('POST', `/v1/workspaces/${owner.accountId}/invitations`, { body: { email: VIEWER, role: 'viewer' } }), 409, 'conflict')
      await refusedWithoutWriting(store, () => owner.call('PATCH', `/v1/workspaces/${owner.accountId}`, { body: { name: 'Mine' } }), 409, 'conflict')
      // renamed, and listed with the new name
      expect((await owner.call('PATCH', `/v1/workspaces/${team}`, { workspace: team, body: { name: 'Operations' } })).body).toMatchObject({ id: team, name: 'Operations' })
      // the personal workspace, as its owner sees it: one member, no invitations
      const personal = (await owner.call('GET', `/v1/workspaces/${owner.accountId}`)).body
      expect([personal.name, personal.kind, personal.role, personal.members.map((m: { email: string; role: string }) => `${m.email}:${m.role}`), personal.invitations])
        .toEqual(['Personal', 'personal', 'owner', [`${OWNER}:owner`], []])
      // nobody signs up with a team's email
      await expect(t.services.web.setPassword(`${team}@workspace.invalid`, PASSWORD)).rejects.toThrow(/reserved/)
    }, 30_000)

    test('two owners removing each other at once: one goes, the other stays the last owner (409)', async () => {
      const owner = await browserOf(t, OWNER)
      const team = (await owner.call('POST', '/v1/workspaces', { body: { name: 'Ops' } })).body.id as string
      const token = (await owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: VIEWER, role: 'owner' } })).body.token
      const second = await browserOf(t, VIEWER)
      expect((await second.call('POST', '/v1/invitations/accept', { body: { token } })).body.role).toBe('owner')
      const [a, b2] = await Promise.all([
        owner.call('DELETE', `/v1/workspaces/${team}/members/${second.accountId}`, { workspace: team }),
        second.call('DELETE', `/v1/workspaces/${team}/members/${owner.accountId}`, { workspace: team }),
      ])
      expect([a.status, b2.status].sort()).toEqual([204, 409])
      expect((await rowCounts(store)).owners).toBe(1)
    }, 30_000)

    test('keys: a member revokes their own, an admin any; no key wider than its maker\'s credential; owners made by owners only', async () => {
      const owner = await browserOf(t, OWNER)
      const team = (await owner.call('POST', '/v1/workspaces', { body: { name: 'Ops' } })).body.id as string
      const join = async (email: string, role: string) => {
        const token = (await owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email, role } })).body.token
        const who = await browserOf(t, email)
        expect((await who.call('POST', '/v1/invitations/accept', { body: { token } })).status).toBe(200)
        return who
      }
      const admin = await join(EDITOR, 'admin')
      const viewer = await join(VIEWER, 'viewer')
      const keyOf = async (who: typeof owner, body: object = {}) => (await who.call('POST', `/v1/workspaces/${team}/keys`, { workspace: team, body })).body as { id: string; key: string; scopes: string[] }
      const ownerKey = await keyOf(owner)
      const viewerKey = await keyOf(viewer, { scopes: ['notes:read'] })
      expect(viewerKey.scopes).toEqual(['notes:read'])
      const viewerSecond = await keyOf(viewer)
      // a key that has only notes:read cannot make one with more
      await refusedWithoutWriting(store, () => t.call('POST', `/v1/workspaces/${team}/keys`, { token: viewerSecond.key, body: { scopes: ['notes:read', 'bogus:scope'] } }), 400, 'invalid_request')
      const narrow = await t.call('POST', `/v1/workspaces/${team}/keys`, { token: (await keyOf(viewer, { scopes: ['notes:write'] })).key, body: { scopes: ['notes:write', 'usage:read'] } })
      expectEnvelope(narrow, 403, 'insufficient_scope')
      // the viewer may revoke their own key, not the owner's; the admin may revoke the viewer's
      await refusedWithoutWriting(store, () => viewer.call('DELETE', `/v1/workspaces/${team}/keys/${ownerKey.id}`, { workspace: team }), 403, 'insufficient_scope')
      expect((await viewer.call('DELETE', `/v1/workspaces/${team}/keys/${viewerKey.id}`, { workspace: team })).status).toBe(204)
      expectEnvelope(await t.call('GET', '/v1/notes', { token: viewerKey.key }), 401, 'invalid_token')
      expect((await admin.call('DELETE', `/v1/workspaces/${team}/keys/${viewerSecond.id}`, { workspace: team })).status).toBe(204)
      expectEnvelope(await t.call('GET', '/v1/notes', { token: viewerSecond.key }), 401, 'invalid_token')
      expect((await t.call('GET', '/v1/notes', { token: ownerKey.key })).status).toBe(200)
      // an admin neither makes nor touches owners
      await refusedWithoutWriting(store, () => admin.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: 'new@team.test', role: 'owner' } }), 403, 'insufficient_scope')
      await refusedWithoutWriting(store, () => admin.call('PATCH', `/v1/workspaces/${team}/members/${viewer.accountId}`, { workspace: team, body: { role: 'owner' } }), 403, 'insufficient_scope')
      await refusedWithoutWriting(store, () => admin.call('PATCH', `/v1/workspaces/${team}/members/${owner.accountId}`, { workspace: team, body: { role: 'viewer' } }), 403, 'insufficient_scope')
      await refusedWithoutWriting(store, () => admin.call('DELETE', `/v1/workspaces/${team}/members/${owner.accountId}`, { workspace: team }), 403, 'insufficient_scope')
      // a viewer removes no one but may leave
      await refusedWithoutWriting(store, () => viewer.call('DELETE', `/v1/workspaces/${team}/members/${admin.accountId}`, { workspace: team }), 403, 'insufficient_scope')
      expect((await viewer.call('DELETE', `/v1/workspaces/${team}/members/${viewer.accountId}`, { workspace: team })).status).toBe(204)
      expect((await viewer.call('GET', '/v1/workspaces')).body.data.map((w: { kind: string }) => w.kind)).toEqual(['personal'])
    }, 30_000)

    test('an invitation is open 7 days; a revoked one cannot be accepted', async () => {
      const owner = await browserOf(t, OWNER)
      const team = (await owner.call('POST', '/v1/workspaces', { body: { name: 'Ops' } })).body.id as string
      const first = (await owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: VIEWER, role: 'viewer' } })).body
      const second = (await owner.call('POST', `/v1/workspaces/${team}/invitations`, { workspace: team, body: { email: VIEWER, role: 'editor' } })).body
      expect((await owner.call('DELETE', `/v1/workspaces/${team}/invitations/${second.id}`, { workspace: team })).status).toBe(204)
      clock.advance(7 * 86_400_000 + 1000)
      const viewer = await browserOf(t, VIEWER)
      for (const token of [first.token, second.token]) {
        const res = await refusedWithoutWriting(store, () => viewer.call('POST', '/v1/invitations/accept', { body: { token } }), 404, 'not_found')
        expect(res.body.error.message).toContain('ask')
      }
    }, 30_000)
  })
}
