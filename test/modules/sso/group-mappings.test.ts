import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { createTestApp } from '../../helpers/app'
import { cookieBrowser, field } from '../../helpers/web'
import { signInAtProviderWithoutBrowser, startOidcProvider, type ProviderPerson } from '../../helpers/oidc-provider'
import { invited, sessionCaller, teamKey, teamOf } from './team-setup'

/**
 * The workspaces' SSO group mappings at work (issue 35), on each back end: a person signs in through
 * the real OpenID Connect provider on loopback (its pages driven without a browser, notesvc's routes
 * through app.handle) and their team memberships follow their groups at each sign-in; what they then
 * may do is asked of the API with their browser session, as the library's script asks it.
 */
const ORIGIN = 'http://localhost'
const REDIRECT = `${ORIGIN}/signin/oidc/callback`
const SECRET = 'a-secret-of-forty-characters-0123456789ab'
const people: Record<string, ProviderPerson> = {}
let provider: Awaited<ReturnType<typeof startOidcProvider>>

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [REDIRECT], clientId: 'notesvc', clientSecret: SECRET, people })
})
afterAll(() => provider?.stop())

type TestApp = ReturnType<typeof createTestApp>

/** "Sign in with …" through the provider as `login`: the callback's answer, and the person's session as an API caller. */
async function ssoSignIn(t: TestApp, login: string) {
  const b = cookieBrowser(ORIGIN, r => t.app.handle(r) as Promise<Response>)
  const start = await b.get('/signin/oidc?next=%2Fsettings')
  expect(start.status).toBe(303)
  const back = await b.get(`/signin/oidc/callback${await signInAtProviderWithoutBrowser(start.location!, login, REDIRECT)}`)
  const accountId = (await t.store.get<{ account_id: string }>('SELECT account_id FROM sso_identities WHERE subject = ?', [login]))?.account_id ?? null
  if (back.status !== 303) return { status: back.status, text: back.text, accountId, call: null }
  const csrf = field((await b.get('/settings')).text, 'csrf')!
  const cookie = `notesvc_session=${b.jar.get('notesvc_session')}`
  const call = (method: string, path: string, o: { workspace?: string; body?: unknown } = {}) =>
    t.call(method, path, { body: o.body, headers: { cookie, 'x-csrf-token': csrf, ...(o.workspace ? { 'x-notesvc-workspace': o.workspace } : {}) } })
  return { status: back.status, text: back.text, accountId: accountId!, call }
}

for (const b of backEnds) describe.skipIf(b.skip)(`SSO group mappings on ${b.name}`, () => {
  const open = closingAfterEach(b)
  const env = {
    NOTESVC_OIDC_ISSUER: '', NOTESVC_OIDC_CLIENT_ID: 'notesvc', NOTESVC_OIDC_CLIENT_SECRET: SECRET, NOTESVC_OIDC_SCOPES: 'openid email profile groups',
    // a key revoked is refused at once on both back ends (the key cache's bound is tested elsewhere)
    NOTESVC_READ_CACHE: 'off',
  }
  const app = async () => createTestApp({ store: await open(), env: { ...env, NOTESVC_OIDC_ISSUER: provider.issuer } })
  /** the owner's team with these mappings, set through the API with the owner's session in the team */
  async function teamWithMappings(t: TestApp, mappings: { group: string; role: string }[]) {
    const owner = await t.services.accounts.ensureAccount(`owner-${b.name}@example.com`)
    const team = await teamOf(t, owner.id, 'Engineering')
    const asOwner = await sessionCaller(t, owner.id)
    const set = await asOwner('PUT', `/v1/workspaces/${team}/sso-groups`, { workspace: team, body: { mappings } })
    expect([set.status, set.body]).toEqual([200, { mappings }])
    return { owner, team, asOwner }
  }
  const membership = async (t: TestApp, team: string, accountId: string | null) =>
    t.store.get<{ role: string; via: string }>('SELECT role, via FROM workspace_members WHERE workspace_id = ? AND account_id = ?', [team, accountId])
  const teamEvents = async (t: TestApp, team: string) => (await t.store.all<{ action: string; actor_type: string; actor_id: string; details: string }>(
    "SELECT action, actor_type, actor_id, details FROM audit_events WHERE account_id = ? AND action LIKE 'workspace.%' ORDER BY at, id", [team]))
    .map(e => `${e.action} ${e.actor_type}:${e.actor_id} ${e.details}`)

  test('in group "eng": joins the team with the mapped role; raised when the mapping changes; out of the group: removed, their team key refused', async () => {
    const t = await app()
    const { team, asOwner } = await teamWithMappings(t, [{ group: 'eng', role: 'viewer' }, { group: 'ops', role: 'admin' }])
    const login = `eve-${b.name}`
    people[login] = { email: `eve-${b.name}@example.com`, email_verified: true, groups: ['eng', 'sales'] }

    const first = await ssoSignIn(t, login)
    expect(first.status).toBe(303)
    expect(await membership(t, team, first.accountId)).toEqual({ role: 'viewer', via: 'sso' })
    // the session works in the team as a viewer: reads, and is refused writing, naming the role
    expect((await first.call!('GET', '/v1/notes', { workspace: team })).status).toBe(200)
    const write = await first.call!('POST', '/v1/notes', { workspace: team, body: { title: 'Eve', content: 'Not yet.' } })
    expect([write.status, write.body.error.code, write.body.error.details]).toEqual([403, 'insufficient_scope', [{ field: 'role', issue: 'viewer (needed: editor)' }]])

    // the owner raises the mapping: at eve's next sign-in she is an editor
    expect((await asOwner('PUT', `/v1/workspaces/${team}/sso-groups`, { workspace: team, body: { mappings: [{ group: 'eng', role: 'editor' }] } })).status).toBe(200)
    const second = await ssoSignIn(t, login)
    expect(await membership(t, team, second.accountId)).toEqual({ role: 'editor', via: 'sso' })
    expect((await second.call!('POST', '/v1/notes', { workspace: team, body: { title: 'Eve\'s plan', content: 'Ship on Friday.' } })).status).toBe(201)
    const key = await teamKey(t, team, `eve-${b.name}@example.com`)
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(200)

    // the provider drops eng: at the next sign-in the membership is gone, her team key refused
    people[login]!.groups = ['sales']
    const third = await ssoSignIn(t, login)
    expect(third.status).toBe(303)
    expect(await membership(t, team, third.accountId)).toBeNull()
    const refused = await t.call('GET', '/v1/notes', { token: key })
    expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_token'])
    const notMember = await third.call!('GET', '/v1/notes', { workspace: team })
    expect([notMember.status, notMember.body.error.code]).toEqual([403, 'insufficient_scope'])
    // her note stays the team's
    expect((await asOwner('GET', '/v1/notes', { workspace: team })).body.data.map((n: { title: string }) => n.title)).toEqual(['Eve\'s plan'])

    expect(await teamEvents(t, team)).toEqual([
      expect.stringMatching(/^workspace\.sso_groups_set user:acct_\S+ \{"mappings":2,"groups":"eng=viewer, ops=admin"\}$/),
      `workspace.member_added sso:${login} {"via":"sso","role":"viewer"}`,
      expect.stringMatching(/^workspace\.sso_groups_set user:acct_\S+ \{"mappings":1,"groups":"eng=editor"\}$/),
      `workspace.role_changed sso:${login} {"from":"viewer","to":"editor","via":"sso"}`,
      `workspace.member_removed sso:${login} {"keysRevoked":1,"grantsRevoked":0,"self":false,"via":"sso"}`,
    ])
  }, 30_000)

  test('a membership from an invitation is never touched: not lowered by a mapping, not removed out of every group', async () => {
    const t = await app()
    const { team } = await teamWithMappings(t, [{ group: 'eng', role: 'viewer' }])
    const login = `ian-${b.name}`
    people[login] = { email: `ian-${b.name}@example.com`, email_verified: true, groups: ['eng'] }
    const ian = await t.services.accounts.ensureAccount(`ian-${b.name}@example.com`)
    await invited(t, team, ian.id, 'admin')
    expect((await ssoSignIn(t, login)).accountId).toBe(ian.id)
    expect(await membership(t, team, ian.id)).toEqual({ role: 'admin', via: 'invitation' })
    people[login]!.groups = []
    expect((await ssoSignIn(t, login)).status).toBe(303)
    expect(await membership(t, team, ian.id)).toEqual({ role: 'admin', via: 'invitation' })
    expect((await teamEvents(t, team)).filter(e => !e.startsWith('workspace.sso_groups_set'))).toEqual([])
  }, 30_000)

  test('three people: the owner makes the team and maps "eng"; an invited editor files a note; the SSO person reads the shared folder\'s note', async () => {
    const t = await app()
    const { team, asOwner } = await teamWithMappings(t, [{ group: 'eng', role: 'viewer' }])
    const folder = await asOwner('POST', '/v1/folders', { workspace: team, body: { name: 'Shared' } })
    expect(folder.status).toBe(201)
    const editor = await t.services.accounts.ensureAccount(`ed-${b.name}@example.com`)
    await invited(t, team, editor.id, 'editor')
    const asEditor = await sessionCaller(t, editor.id)
    const note = await asEditor('POST', '/v1/notes', { workspace: team, body: { title: 'Roadmap', content: 'Beta in March, launch in May.', folderId: folder.body.id } })
    expect(note.status).toBe(201)

    const login = `sam-${b.name}`
    people[login] = { email: `sam-${b.name}@example.com`, email_verified: true, groups: ['eng'] }
    const sam = await ssoSignIn(t, login)
    // before: nothing of the team is theirs; their own library is empty
    expect((await sam.call!('GET', '/v1/notes')).body.data).toEqual([])
    const listed = await sam.call!('GET', `/v1/notes?folderId=${folder.body.id}`, { workspace: team })
    expect([listed.status, listed.body.data.map((n: { title: string }) => n.title)]).toEqual([200, ['Roadmap']])
    const read = await sam.call!('GET', `/v1/notes/${note.body.id}`, { workspace: team })
    expect([read.status, read.body.title, read.body.folderId]).toEqual([200, 'Roadmap', folder.body.id])
  }, 30_000)

  test('an email at @workspace.invalid (a team row\'s) is refused; nothing created', async () => {
    const t = await app()
    const login = `wsi-${b.name}`
    const owner = await t.services.accounts.ensureAccount(`owner-${b.name}@example.com`)
    const team = await teamOf(t, owner.id, 'Engineering')
    people[login] = { email: `${team}@Workspace.Invalid`, email_verified: true }
    const before = await t.store.all('SELECT id FROM accounts ORDER BY id')
    const r = await ssoSignIn(t, login)
    expect([r.status, r.accountId]).toEqual([403, null])
    expect(r.text).toContain('Email address reserved')
    expect(await t.store.all('SELECT id FROM accounts ORDER BY id')).toEqual(before)
    expect(await t.store.all('SELECT subject FROM sso_identities')).toEqual([])
  }, 30_000)
})
