import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

/**
 * Removing a member of a team ends what sends the team's notes or events outside under their name
 * (migration 34): the webhook endpoints they made are disabled and their share links revoked, in the
 * removal's transaction; what others made, and what the member made in their own workspace, stay.
 */
const ENV = { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }

for (const b of backEnds) describe.skipIf(b.skip)(`a removed member's webhooks and share links on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('the admin removed: their team endpoint disabled, their team link a 404; the owner\'s endpoint and link and the admin\'s own ones untouched; counted in the audit line', async () => {
    const t = createTestApp({ store: await open(), env: ENV })
    const ws = await teamWorkspace(t, 'Research')
    const owner = await person(t, 'owner@example.com')
    const ownerKey = await memberKey(t, ws, owner.id, 'owner')
    const admin = await person(t, 'admin@example.com')
    const adminKey = await memberKey(t, ws, admin.id, 'admin')

    const hook = async (token: string, url: string) => {
      const r = await t.call('POST', '/v1/webhooks', { token, body: { url, events: ['note.completed'] } })
      expect(r.status).toBe(201)
      return r.body.id as string
    }
    const note = async (token: string, title: string) => {
      const r = await t.call('POST', '/v1/notes', { token, body: { title, content: 'Words of the meeting.' } })
      expect(r.status).toBe(201)
      return r.body.id as string
    }
    const link = async (token: string, noteId: string) => {
      const r = await t.call('POST', `/v1/notes/${noteId}/shares`, { token, body: {} })
      expect(r.status).toBe(201)
      return new URL(r.body.url as string).pathname
    }
    const teamNote = await note(ownerKey, 'Kick-off')
    const adminsHook = await hook(adminKey, 'http://127.0.0.1:8999/admin')
    const ownersHook = await hook(ownerKey, 'http://127.0.0.1:8999/owner')
    const personalHook = await hook(admin.personalKey, 'http://127.0.0.1:8999/mine')
    const adminsLink = await link(adminKey, teamNote)
    const ownersLink = await link(ownerKey, teamNote)
    const personalLink = await link(admin.personalKey, await note(admin.personalKey, 'Mine'))
    for (const path of [adminsLink, ownersLink, personalLink]) expect((await t.app.handle(new Request(`http://localhost${path}`))).status).toBe(200)

    expect((await t.call('DELETE', `/v1/workspaces/${ws}/members/${admin.id}`, { token: ownerKey })).status).toBe(204)

    const hooks = new Map((await t.call('GET', '/v1/webhooks', { token: ownerKey })).body.data.map((h: { id: string }) => [h.id, h]))
    expect(hooks.get(adminsHook)).toMatchObject({ disabledReason: 'the member who made it left the workspace' })
    expect((hooks.get(adminsHook) as { disabledAt: string | null }).disabledAt).not.toBeNull()
    expect(hooks.get(ownersHook)).toMatchObject({ disabledAt: null })
    expect((await t.call('GET', '/v1/webhooks', { token: admin.personalKey })).body.data).toMatchObject([{ id: personalHook, disabledAt: null }])
    expect((await t.app.handle(new Request(`http://localhost${adminsLink}`))).status).toBe(404)
    expect((await t.app.handle(new Request(`http://localhost${ownersLink}`))).status).toBe(200)
    expect((await t.app.handle(new Request(`http://localhost${personalLink}`))).status).toBe(200)

    const removed = (await t.call('GET', '/v1/audit-events?action=workspace.member_removed', { token: ownerKey })).body.data
    expect(removed.map((e: { details: Record<string, unknown> }) => e.details)).toMatchObject([{ keysRevoked: 1, webhooksDisabled: 1, sharesRevoked: 1, self: false }])
  })
})
