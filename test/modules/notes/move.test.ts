import { describe, expect, test } from 'bun:test'
import type { Store } from '../../../src/db/store'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'

/**
 * moveNote (POST /v1/notes/{id}/move) on both back ends: a note leaves one workspace for another of
 * the same person, with what belonged to the old one let go (folder, tags, voice links, share links),
 * the search following it, and `note.moved` in both audit logs; refused (404 for a workspace that is
 * not the person's, 403 for a viewer there, 403 for a viewer of the source) with nothing changed.
 */
for (const b of backEnds) describe.skipIf(b.skip)(`moving a note on ${b.name}`, () => {
  const open = closingAfterEach(b)

  /** Alice with a note in her personal workspace: in a folder, tagged, shared, a speaker linked to a remembered voice. */
  async function setUp(store: Store) {
    const t = createTestApp({ store })
    const alice = await person(t, 'alice@example.com')
    const team = await teamWorkspace(t, 'Harbor team')
    const aliceInTeam = await memberKey(t, team, alice.id, 'editor')
    const carol = await person(t, 'carol@example.com')
    const carolOwner = await memberKey(t, team, carol.id, 'owner')
    const own = alice.personalKey
    const folder = await t.call('POST', '/v1/folders', { token: own, body: { name: 'Plans' } })
    const note = await t.call('POST', '/v1/notes', { token: own, body: { title: 'Quarterly lighthouse plan', content: 'The lighthouse budget for the quarter.', folderId: folder.body.id } })
    expect(note.status).toBe(201)
    const id = note.body.id as string
    expect((await t.call('POST', `/v1/notes/${id}/tags`, { token: own, body: { tags: ['budget'] } })).status).toBe(200)
    const share = await t.call('POST', `/v1/notes/${id}/shares`, { token: own, body: { showSummary: true } })
    expect(share.status).toBe(201)
    const sharePath = new URL(share.body.url as string).pathname
    expect((await t.app.handle(new Request(`http://localhost${sharePath}`))).status).toBe(200)
    const at = new Date().toISOString()
    await store.run("INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES ('spk_alice_voice', ?, 0, 'Dana', 'test', '[1]', ?, ?)", [alice.id, at, at])
    await store.run("INSERT INTO note_speakers (note_id, label, name, said, profile_id, suggested_profile_id, suggested_name) VALUES (?, 'A', 'Dana', 'budget', 'spk_alice_voice', NULL, NULL)", [id])
    return { t, alice, team, aliceInTeam, carol, carolOwner, own, id, folderId: folder.body.id as string, sharePath }
  }

  const found = async (t: ReturnType<typeof createTestApp>, token: string, q: string) =>
    ((await t.call('GET', `/v1/notes?q=${encodeURIComponent(q)}`, { token })).body.data as { id: string }[]).map(n => n.id)

  test('moves the note into the team: gone from the old workspace and its search, found in the new one, folder, tags, voices and share links let go', async () => {
    const s = await setUp(await open())
    const { t, id } = s
    expect(await found(t, s.own, 'lighthouse')).toEqual([id])
    expect(await found(t, s.aliceInTeam, 'lighthouse')).toEqual([])

    const moved = await t.call('POST', `/v1/notes/${id}/move`, { token: s.own, body: { workspaceId: s.team } })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ id, title: 'Quarterly lighthouse plan', folderId: null, tags: [] })
    expect(moved.headers.get('etag')).toBe((await t.call('GET', `/v1/notes/${id}`, { token: s.aliceInTeam })).headers.get('etag'))

    // the old workspace: gone, from reads, lists and search
    expectEnvelope(await t.call('GET', `/v1/notes/${id}`, { token: s.own }), 404, 'not_found')
    expect(await found(t, s.own, 'lighthouse')).toEqual([])
    expect(((await t.call('GET', '/v1/notes', { token: s.own })).body.data as unknown[]).length).toBe(0)
    // the new one: read, listed, searched, by any member
    expect((await t.call('GET', `/v1/notes/${id}`, { token: s.carolOwner })).body).toMatchObject({ id, summary: 'The lighthouse budget for the quarter.', folderId: null, tags: [] })
    expect(await found(t, s.aliceInTeam, 'lighthouse')).toEqual([id])
    expect(await found(t, s.carolOwner, 'quarterly')).toEqual([id])
    expect(await found(t, s.aliceInTeam, 'lighthouse budget')).toEqual([id])
    // a filter on the old folder finds nothing in either
    expect((await t.call('GET', `/v1/notes?folderId=${s.folderId}`, { token: s.own })).body.data).toEqual([])
    // its tag stays a tag of the old workspace, on no note
    expect((await t.call('GET', '/v1/notes?tag=budget', { token: s.own })).body.data).toEqual([])
    expect((await t.call('GET', '/v1/tags', { token: s.aliceInTeam })).body.data).toEqual([])
    // and a change of that tag there does not reach the moved note
    const oldTag = (await t.call('GET', '/v1/tags', { token: s.own })).body.data[0]
    expect((await t.call('PATCH', `/v1/tags/${oldTag.id}`, { token: s.own, body: { name: 'costs' } })).status).toBe(200)
    expect((await t.call('GET', `/v1/notes/${id}`, { token: s.aliceInTeam })).body.tags).toEqual([])
    // the share link no longer opens
    expect((await t.app.handle(new Request(`http://localhost${s.sharePath}`))).status).not.toBe(200)
    // the speaker keeps the name, not the old workspace's voice
    expect(await t.store.get('SELECT name, profile_id FROM note_speakers WHERE note_id = ?', [id])).toEqual({ name: 'Dana', profile_id: null })

    // note.moved in both logs, by Alice's personal key
    const ownLog = (await t.call('GET', '/v1/audit-events?action=note.moved', { token: s.own })).body.data
    const teamLog = (await t.call('GET', '/v1/audit-events?action=note.moved', { token: s.carolOwner })).body.data
    for (const [log, accountId] of [[ownLog, s.alice.id], [teamLog, s.team]] as const) {
      expect(log).toHaveLength(1)
      expect(log[0]).toMatchObject({ accountId, action: 'note.moved', target: { type: 'note', id }, details: { from: s.alice.id, to: s.team, tagsRemoved: 1, sharesRevoked: 1, folderCleared: true } })
    }

    // and back again, by the team key: the person is the owner of their personal workspace
    const back = await t.call('POST', `/v1/notes/${id}/move`, { token: s.aliceInTeam, body: { workspaceId: s.alice.id } })
    expect(back.status).toBe(200)
    expect(await found(t, s.own, 'lighthouse')).toEqual([id])
    expect(await found(t, s.aliceInTeam, 'lighthouse')).toEqual([])
  })

  /** What a refused move must leave as it was: the note where it was, in its folder, tagged, shared, found. */
  async function unchanged(s: Awaited<ReturnType<typeof setUp>>) {
    const { t, id } = s
    expect((await t.call('GET', `/v1/notes/${id}`, { token: s.own })).body).toMatchObject({ id, folderId: s.folderId, tags: [{ name: 'budget' }] })
    expect(await found(t, s.own, 'lighthouse')).toEqual([id])
    expect(await found(t, s.aliceInTeam, 'lighthouse')).toEqual([])
    expect((await t.app.handle(new Request(`http://localhost${s.sharePath}`))).status).toBe(200)
    expect(await t.store.get('SELECT profile_id FROM note_speakers WHERE note_id = ?', [id])).toEqual({ profile_id: 'spk_alice_voice' })
    expect((await t.call('GET', '/v1/audit-events?action=note.moved', { token: s.own })).body.data).toEqual([])
  }

  test('a workspace that is not one of the person\'s is 404, and nothing changes', async () => {
    const s = await setUp(await open())
    const dave = await person(s.t, 'dave@example.com')
    const elsewhere = await teamWorkspace(s.t, 'Not Alice\'s')
    for (const target of [dave.id, elsewhere, 'acct_nosuchworkspace']) {
      const r = await s.t.call('POST', `/v1/notes/${s.id}/move`, { token: s.own, body: { workspaceId: target } })
      expectEnvelope(r, 404, 'not_found')
      expect(r.body.error.message).toContain('GET /v1/workspaces')
    }
    await unchanged(s)
  })

  test('a viewer of the target workspace is refused with 403 naming the role, and nothing changes', async () => {
    const s = await setUp(await open())
    const readOnly = await teamWorkspace(s.t, 'Read only')
    await memberKey(s.t, readOnly, s.alice.id, 'viewer')
    const r = await s.t.call('POST', `/v1/notes/${s.id}/move`, { token: s.own, body: { workspaceId: readOnly } })
    expectEnvelope(r, 403, 'insufficient_scope')
    expect(r.body.error.message).toContain('viewer')
    expect(r.body.error.message).toContain('editor')
    await unchanged(s)
  })

  test('a viewer of the source workspace is refused by admission (403 naming the role); a bad body is 400', async () => {
    const s = await setUp(await open())
    const { t } = s
    const inTeam = await t.call('POST', '/v1/notes', { token: s.carolOwner, body: { title: 'Team note', content: 'Harbour keepers.' } })
    const bob = await person(t, 'bob@example.com')
    const bobViewer = await memberKey(t, s.team, bob.id, 'viewer')
    const r = await t.call('POST', `/v1/notes/${inTeam.body.id}/move`, { token: bobViewer, body: { workspaceId: bob.id } })
    expectEnvelope(r, 403, 'insufficient_scope')
    expect(r.body.error.message).toContain('Your role in this workspace is viewer; moveNote needs editor')
    expect((await t.call('GET', `/v1/notes/${inTeam.body.id}`, { token: s.carolOwner })).status).toBe(200)
    expectEnvelope(await t.call('POST', `/v1/notes/${s.id}/move`, { token: s.own, body: {} }), 400, 'invalid_request')
    expectEnvelope(await t.call('POST', `/v1/notes/${s.id}/move`, { token: s.own, body: { workspaceId: s.alice.id } }), 400, 'invalid_request')
    expectEnvelope(await t.call('POST', '/v1/notes/note_nosuchnote/move', { token: s.own, body: { workspaceId: s.team } }), 404, 'not_found')
    await unchanged(s)
  })
})
