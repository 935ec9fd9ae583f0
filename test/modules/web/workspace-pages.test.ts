import { describe, expect, test } from 'bun:test'
import { sha256 } from '../../../src/crypto/digest'
import { grantPeriod } from '../../../src/modules/credits/model'
import { teamEmail, type Role } from '../../../src/modules/workspaces/model'
import { ALL_SCOPES } from '../../../src/http/contract'
import { cookieBrowser, field, signedIn, webAppWithPassword, type WebTestApp } from '../../helpers/web'
import { createTestApp } from '../../helpers/app'
import { replayLibrivoxRecognizers } from '../../fixtures/replay-recognizer'

/**
 * The workspace parts of the pages, through app.handle: the header's switcher (the person's
 * workspaces, the current one, names escaped), switching (the cookie; a workspace not the person's
 * refused), the fallback to the personal workspace when a membership ends, the workspace page by
 * role, an invitation's page, and the recording route in another's workspace.
 */
const OWNER = 'owner@example.com'
const MEMBER = 'member@example.com'
const PASSWORD = 'a workspace passphrase'
const HOSTILE = '<script>alert(1)</script> & "Research"'

async function team(t: WebTestApp, name: string, members: [email: string, role: Role][]): Promise<string> {
  const repo = t.services.workspacesRepo
  const id = `ws_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
  const now = new Date()
  await repo.insertTeam({ id, name, email: teamEmail(id), plan: 'free', grant_period: grantPeriod(now), created_at: now.toISOString() })
  for (const [email, role] of members) {
    const person = await t.services.accounts.ensureAccount(email)
    await repo.addMember({ workspace_id: id, account_id: person.id, role, via: 'invitation', added_at: now.toISOString() })
  }
  return id
}

async function app() {
  const t = await webAppWithPassword(OWNER, PASSWORD)
  await t.web().setPassword(MEMBER, PASSWORD)
  const owner = (await t.services.accounts.ensureAccount(OWNER)).id
  const member = (await t.services.accounts.ensureAccount(MEMBER)).id
  return { t, owner, member }
}

/** the options of the header's workspace menu: [value, text, selected] */
function menu(html: string): [string, string, boolean][] {
  const select = /<select id="workspace-select"[^>]*>(.*?)<\/select>/s.exec(html)?.[1] ?? ''
  return [...select.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map(m => [m[1]!, m[3]!, m[2] !== undefined])
}
const meta = (html: string) => /<meta name="notesvc-workspace" content="([^"]*)">/.exec(html)?.[1]
const role = (html: string) => /<body [^>]*data-role="([^"]*)"/.exec(html)?.[1]

describe('the header\'s workspace menu', () => {
  test('lists Personal first, then the teams with the role; the current one selected; names escaped', async () => {
    const { t, owner } = await app()
    const id = await team(t, HOSTILE, [[OWNER, 'admin']])
    const { b } = await signedIn(t, OWNER, PASSWORD, '/')
    const page = await b.get('/')
    expect(menu(page.text)).toEqual([[owner, 'Personal', true], [id, '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Research&quot; (admin)', false]])
    expect(page.text).not.toContain('<script>alert(1)')
    expect(meta(page.text)).toBe(owner)
    expect(role(page.text)).toBe('owner')
  })

  test('switching sets the cookie; the library, a note page and the workspace page are drawn in the team with the role', async () => {
    const { t, member } = await app()
    const id = await team(t, 'Research', [[OWNER, 'owner'], [MEMBER, 'viewer']])
    const { b, page } = await signedIn(t, MEMBER, PASSWORD, '/')
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)![1]!
    const r = await b.post('/workspace/switch', { csrf, workspace: id, next: '/' }, { origin: 'http://localhost' })
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: '/' })
    expect(r.cookies.find(c => c.startsWith('notesvc_workspace='))).toMatch(/^notesvc_workspace=ws_\w+; HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+$/)
    for (const path of ['/', '/notes/not-a-note', '/settings/workspace']) {
      const p = await b.get(path)
      expect({ path, status: p.status, meta: meta(p.text), role: role(p.text) }).toEqual({ path, status: 200, meta: id, role: 'viewer' })
    }
    // a viewer: the page says which role and shows no admin sections
    const ws = await b.get('/settings/workspace')
    expect(ws.text).toContain('Your role: <b>viewer</b>')
    expect(ws.text).toContain('id="admin-only"')
    expect(ws.text).not.toContain('id="members"')
    expect(menu(ws.text).find(o => o[2])).toEqual([id, 'Research (viewer)', true])

    // the membership ends: the next page is drawn in the personal workspace again
    await t.services.workspacesRepo.removeMember(id, member)
    const after = await b.get('/')
    expect({ meta: meta(after.text), role: role(after.text), options: menu(after.text).map(o => o[1]) }).toEqual({ meta: member, role: 'owner', options: ['Personal'] })
  })

  test('a workspace the person is not a member of is refused (403, no cookie); a form without the session\'s token too', async () => {
    const { t } = await app()
    const id = await team(t, 'Theirs', [[OWNER, 'owner']])
    const { b, page } = await signedIn(t, MEMBER, PASSWORD, '/')
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)![1]!
    const refused = await b.post('/workspace/switch', { csrf, workspace: id, next: '/' }, { origin: 'http://localhost' })
    expect(refused.status).toBe(403)
    expect(refused.text).toContain('You are not a member of that workspace')
    expect(refused.cookies).toEqual([])
    const noToken = await b.post('/workspace/switch', { csrf: 'wrong', workspace: id, next: '/' }, { origin: 'http://localhost' })
    expect(noToken.status).toBe(403)
    // a cookie set by hand to another's workspace is not used
    b.jar.set('notesvc_workspace', id)
    const forged = await b.get('/')
    expect({ meta: meta(forged.text), options: menu(forged.text).map(o => o[1]) }).toEqual({ meta: (await t.services.accounts.ensureAccount(MEMBER)).id, options: ['Personal'] })
  })

  test('the record button in the personal workspace and in a team (the stream names the page\'s workspace)', async () => {
    const t = createTestApp({ liveRecognizers: replayLibrivoxRecognizers() })
    await t.services.web.setPassword(MEMBER, PASSWORD)
    const member = (await t.services.accounts.ensureAccount(MEMBER)).id
    const id = `ws_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`
    await t.services.workspacesRepo.insertTeam({ id, name: 'Research', email: teamEmail(id), plan: 'free', grant_period: grantPeriod(new Date()), created_at: new Date().toISOString() })
    await t.services.workspacesRepo.addMember({ workspace_id: id, account_id: member, role: 'editor', via: 'invitation', added_at: new Date().toISOString() })
    const b = cookieBrowser('http://localhost', r => t.app.handle(r))
    await b.signIn(MEMBER, PASSWORD, '/')
    const personal = await b.get('/')
    expect(personal.text).toContain('id="open-recorder"')
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(personal.text)![1]!
    await b.post('/workspace/switch', { csrf, workspace: id, next: '/' }, { origin: 'http://localhost' })
    const team = await b.get('/')
    expect({ meta: meta(team.text), recorder: team.text.includes('id="open-recorder"'), upload: team.text.includes('id="open-upload"') }).toEqual({ meta: id, recorder: true, upload: true })
  })

  test('the recording route refuses a workspace the person is not a member of', async () => {
    const { t } = await app()
    const id = await team(t, 'Theirs', [[OWNER, 'owner']])
    const { b } = await signedIn(t, MEMBER, PASSWORD, '/')
    const r = await b.get(`/notes/any/media?workspace=${id}`)
    expect(r.status).toBe(403)
    expect(JSON.parse(r.text).error.code).toBe('insufficient_scope')
  })
})

describe('the settings page\'s keys in a team workspace', () => {
  test('the key is the team\'s, made by the person, says so, is listed to its maker only, and its revocation refuses it', async () => {
    const { t, owner } = await app()
    const id = await team(t, 'Research', [[OWNER, 'owner'], [MEMBER, 'editor']])
    // a note of the team, made with the owner's key of the team
    const ownerKey = (await t.services.workspaces.createKey({ accountId: id, actorId: owner, role: 'owner', sandbox: false, scopes: new Set(ALL_SCOPES), credentialId: 'test', source: 'api_key' }, id, {}, { actor: { type: 'user', id: owner } })).key
    expect((await t.call('POST', '/v1/notes', { token: ownerKey, body: { title: 'Team note', content: 'Shared words.' } })).status).toBe(201)

    const { b, page } = await signedIn(t, MEMBER, PASSWORD, '/settings')
    const csrf = field(page.text, 'csrf')!
    await b.post('/workspace/switch', { csrf, workspace: id, next: '/settings' }, { origin: 'http://localhost' })
    const made = await b.post('/settings/keys', { csrf, name: 'team laptop', library: 'live', scopes: ['notes:read', 'notes:write'] }, { origin: 'http://localhost' })
    expect(made.status).toBe(200)
    expect(made.text).toContain('<b>New live key “team laptop” for Research.</b>')
    expect(made.text).toContain('Keys you made for <b>Research</b>')
    // the header's chip is the team's credits (a free team has no grant: 10 added by the operator, 2
    // spent); the page's own figures are the person's
    await t.services.accounts.addPurchasedCredits(teamEmail(id), 10)
    await t.services.credits.charge({ accountId: id, operation: 'createSummary', credits: 2, source: 'api_key' })
    const settings = await b.get('/settings')
    expect(/<span id="balance">(\d+)<\/span>/.exec(settings.text)?.[1]).toBe('8')
    expect(/<strong id="total">(\d+)<\/strong>/.exec(settings.text)?.[1]).toBe('60')
    expect(settings.text).toContain('<h2>Credits of your personal workspace</h2>')
    // so are the retention policy and the activity shown there: said so, with the way to the team's
    expect(settings.text).toContain('<h2>Retention of your personal workspace</h2>')
    expect(settings.text).toContain('<h2>Activity of your personal workspace</h2>')
    expect(settings.text).toContain('The team\'s own activity is on <a href="/settings/workspace">the workspace page</a>.')
    const key = /<code id="new-key">(svc_live_\w+)<\/code>/.exec(made.text)![1]!
    const notes = await t.call('GET', '/v1/notes', { token: key })
    expect(notes.body.data.map((n: { title: string }) => n.title)).toEqual(['Team note'])
    // a viewer's write through it would be refused; an editor's is not
    expect((await t.call('POST', '/v1/notes', { token: key, body: { title: 'By the editor', content: 'x' } })).status).toBe(201)
    const keyId = /data-key-id="([^"]+)"/.exec(made.text)![1]!

    // the owner's own settings page in the team lists only the owner's keys
    const ownerPage = await signedIn(t, OWNER, PASSWORD, '/settings')
    await ownerPage.b.post('/workspace/switch', { csrf: ownerPage.csrf, workspace: id, next: '/settings' }, { origin: 'http://localhost' })
    expect((await ownerPage.b.get('/settings')).text).not.toContain(keyId)

    const revoked = await b.post(`/settings/keys/${keyId}/revoke`, { csrf }, { origin: 'http://localhost' })
    expect(revoked.status).toBe(303)
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(401)
  })
})

describe('the workspace page', () => {
  test('an admin gets the admin sections; the personal workspace the form that makes a team', async () => {
    const { t } = await app()
    const id = await team(t, 'Research', [[MEMBER, 'admin']])
    const { b, page } = await signedIn(t, MEMBER, PASSWORD, '/settings/workspace')
    expect(page.text).toContain('<h1 id="workspace-title">Personal</h1>')
    expect(page.text).toContain('id="new-team-form"')
    const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)![1]!
    await b.post('/workspace/switch', { csrf, workspace: id, next: '/settings/workspace' }, { origin: 'http://localhost' })
    const admin = await b.get('/settings/workspace')
    for (const part of ['id="members"', 'id="invite-form"', 'id="workspace-keys"', 'id="usage-by-member"', 'id="sso-form"', 'id="workspace-key-form"', 'id="leave-workspace"']) expect(admin.text).toContain(part)
  })

  test('signed out: to the sign-in page and back', async () => {
    const { t } = await app()
    const r = await t.browser().get('/settings/workspace')
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: '/signin?next=%2Fsettings%2Fworkspace' })
  })
})

describe('an invitation\'s page', () => {
  async function invite(t: WebTestApp, workspaceId: string, email: string, o: { revoked?: boolean; expired?: boolean } = {}) {
    const token = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')
    const now = Date.now()
    const invitationId = `inv_${crypto.randomUUID().slice(0, 8)}`
    await t.services.workspacesRepo.insertInvitation({
      id: invitationId, workspace_id: workspaceId, email, role: 'editor', token_hash: sha256(token), invited_by: null,
      created_at: new Date(now).toISOString(), expires_at: new Date(now + (o.expired ? -1000 : 7 * 86400_000)).toISOString(),
    })
    if (o.revoked) expect(await t.services.workspacesRepo.revokeInvitation(workspaceId, invitationId, new Date(now).toISOString())).toBe(true)
    return token
  }

  test('signed out: sign in first, then back to the invitation', async () => {
    const { t } = await app()
    const id = await team(t, 'Research', [[OWNER, 'owner']])
    const token = await invite(t, id, MEMBER)
    const b = t.browser()
    const r = await b.get(`/invitations/${token}`)
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: `/signin?next=${encodeURIComponent(`/invitations/${token}`)}` })
    const signed = await b.signIn(MEMBER, PASSWORD, `/invitations/${token}`)
    expect(signed.location).toBe(`/invitations/${token}`)
  })

  test('signed in: "Join <team> as <role>", the name escaped; the switch form names the team', async () => {
    const { t } = await app()
    const id = await team(t, HOSTILE, [[OWNER, 'owner']])
    const token = await invite(t, id, MEMBER.toUpperCase())
    const { page } = await signedIn(t, MEMBER, PASSWORD, `/invitations/${token}`)
    expect(page.text).toContain('>Join &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Research&quot; as editor</button>')
    expect(page.text).not.toContain('<script>alert(1)')
    expect(page.text).not.toContain('invitation-mismatch')
    expect(field(page.text, 'workspace')).toBe(id)
  })

  test('for another email: says so and the button is off; revoked, expired or unknown: 404 with what to do', async () => {
    const { t } = await app()
    const id = await team(t, 'Research', [[OWNER, 'owner']])
    const theirs = await invite(t, id, 'someone.else@example.com')
    const { b, page } = await signedIn(t, MEMBER, PASSWORD, `/invitations/${theirs}`)
    expect(page.text).toContain('This invitation is for someone.else@example.com, and you are signed in as member@example.com.')
    expect(page.text).toContain('id="accept-invitation" class="primary" disabled')
    for (const token of [await invite(t, id, MEMBER, { revoked: true }), await invite(t, id, MEMBER, { expired: true }), 'x'.repeat(32)]) {
      const r = await b.get(`/invitations/${token}`)
      expect({ status: r.status, said: r.text.includes('Ask an admin of the workspace for a new invitation.'), button: r.text.includes('accept-invitation') }).toEqual({ status: 404, said: true, button: false })
    }
  })
})
