import { describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { invited, sessionCaller, teamKey, teamOf } from '../sso/team-setup'

/**
 * setSsoGroups, PUT /v1/workspaces/{id}/sso-groups (issue 35): who may set the mappings, what a
 * mapping may be, and that a refusal writes nothing. What the mappings do at a sign-in:
 * test/modules/sso/group-mappings.test.ts.
 */
for (const b of backEnds) describe.skipIf(b.skip)(`setSsoGroups on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function team() {
    const t = createTestApp({ store: await open() })
    const owner = await t.services.accounts.ensureAccount('owner@example.com')
    const id = await teamOf(t, owner.id, 'Engineering')
    const people: Record<string, Awaited<ReturnType<typeof sessionCaller>>> = { owner: await sessionCaller(t, owner.id) }
    for (const role of ['admin', 'editor', 'viewer'] as const) {
      const a = await t.services.accounts.ensureAccount(`${role}@example.com`)
      await invited(t, id, a.id, role)
      people[role] = await sessionCaller(t, a.id)
    }
    const put = (who: string, mappings: unknown, o: { workspace?: string; path?: string } = {}) =>
      people[who]!('PUT', o.path ?? `/v1/workspaces/${id}/sso-groups`, { workspace: o.workspace ?? id, body: { mappings } })
    const stored = () => t.store.all<{ group_name: string; role: string }>('SELECT group_name, role FROM sso_group_workspaces WHERE workspace_id = ? ORDER BY group_name', [id])
    const events = async () => (await t.store.all<{ n: number | string }>("SELECT count(*) AS n FROM audit_events WHERE action = 'workspace.sso_groups_set'"))[0]!.n
    return { t, id, owner, put, stored, events }
  }

  test('an admin sets and replaces the mappings (names as the provider sends them); an empty list removes them; each in the audit log', async () => {
    const { put, stored, events, id, t } = await team()
    const first = [{ group: 'eng', role: 'editor' }, { group: 'Eng Leads', role: 'admin' }, { group: 'eng/ops ü', role: 'viewer' }]
    const r = await put('admin', first)
    expect(r.status).toBe(200)
    // as stored: sorted by name, case and spaces kept
    expect(r.body.mappings).toEqual(await stored().then(rows => rows.map(x => ({ group: x.group_name, role: x.role }))))
    expect(new Set(r.body.mappings.map((m: { group: string }) => m.group))).toEqual(new Set(['eng', 'Eng Leads', 'eng/ops ü']))
    expect((await put('admin', [{ group: 'eng', role: 'viewer' }])).body).toEqual({ mappings: [{ group: 'eng', role: 'viewer' }] })
    expect((await put('owner', [])).body).toEqual({ mappings: [] })
    expect(await stored()).toEqual([])
    expect(Number(await events())).toBe(3)
    const line = await t.store.get<{ account_id: string; actor_type: string; details: string }>("SELECT account_id, actor_type, details FROM audit_events WHERE action = 'workspace.sso_groups_set' ORDER BY at, id")
    expect({ ...line, details: JSON.parse(line!.details) }).toEqual({ account_id: id, actor_type: 'user', details: { mappings: 3, groups: 'eng=editor, Eng Leads=admin, eng/ops ü=viewer' } })
  })

  test('a group mapped to owner: only by an owner (an admin gets 403 naming the roles)', async () => {
    const { put, stored } = await team()
    const byAdmin = await put('admin', [{ group: 'founders', role: 'owner' }])
    expectEnvelope(byAdmin, 403, 'insufficient_scope')
    expect(byAdmin.body.error.message).toContain('Your role in this workspace is admin; mapping a group to owner needs owner.')
    expect(await stored()).toEqual([])
    expect((await put('owner', [{ group: 'founders', role: 'owner' }])).status).toBe(200)
  })

  test('editors and viewers: 403 insufficient_scope naming their role and admin; nothing written', async () => {
    const { put, stored, events } = await team()
    for (const who of ['editor', 'viewer']) {
      const r = await put(who, [{ group: 'eng', role: 'viewer' }])
      expectEnvelope(r, 403, 'insufficient_scope')
      expect(r.body.error.details).toEqual([{ field: 'role', issue: `${who} (needed: admin)` }])
    }
    expect([await stored(), Number(await events())]).toEqual([[], 0])
  })

  test('another workspace than the credential\'s: 404; a personal workspace: 409; a team key of the owner works', async () => {
    const { t, put, id, owner, stored } = await team()
    const other = await teamOf(t, owner.id, 'Other')
    // the browser in the team, naming another workspace in the path
    expectEnvelope(await put('owner', [{ group: 'eng', role: 'viewer' }], { path: `/v1/workspaces/${other}/sso-groups` }), 404, 'not_found')
    // the owner's personal workspace
    const personal = await put('owner', [{ group: 'eng', role: 'viewer' }], { path: `/v1/workspaces/${owner.id}/sso-groups`, workspace: owner.id })
    expectEnvelope(personal, 409, 'conflict')
    expect(personal.body.error.message).toContain('Create a team workspace')
    expect(await stored()).toEqual([])
    const key = await teamKey(t, id, 'owner@example.com')
    const byKey = await t.call('PUT', `/v1/workspaces/${id}/sso-groups`, { token: key, body: { mappings: [{ group: 'eng', role: 'editor' }] } })
    expect([byKey.status, byKey.body]).toEqual([200, { mappings: [{ group: 'eng', role: 'editor' }] }])
  })

  test('bad mappings: 400 invalid_request saying which and what to send; nothing written', async () => {
    const { put, stored, events } = await team()
    const cases: [string, unknown, string][] = [
      ['an unknown role', [{ group: 'eng', role: 'superuser' }], 'mappings[0]'],
      ['a group named twice', [{ group: 'eng', role: 'viewer' }, { group: 'eng', role: 'editor' }], 'mappings[1]'],
      ['a blank group', [{ group: '   ', role: 'viewer' }], 'mappings[0]'],
      ['a line break in a group', [{ group: 'eng\nops', role: 'viewer' }], 'mappings[0]'],
      ['an empty group', [{ group: '', role: 'viewer' }], 'mappings.0.group'],
      ['a group of 201 characters', [{ group: 'g'.repeat(201), role: 'viewer' }], 'mappings.0.group'],
      ['101 mappings', Array.from({ length: 101 }, (_, i) => ({ group: `g${i}`, role: 'viewer' })), 'mappings'],
      ['not a list', { group: 'eng', role: 'viewer' }, 'mappings'],
    ]
    const answers: Record<string, [number, string, string]> = {}
    for (const [what, mappings] of cases) {
      const r = await put('owner', mappings)
      answers[what] = [r.status, r.body.error?.code, r.body.error?.details?.[0]?.field]
    }
    expect(answers).toEqual(Object.fromEntries(cases.map(([what, , field]) => [what, [400, 'invalid_request', field]])))
    const unknownRole = await put('owner', [{ group: 'eng', role: 'superuser' }])
    expect(unknownRole.body.error.message).toContain('one of the roles viewer, editor, admin, owner')
    // 200 characters is the limit, and 100 mappings
    expect((await put('owner', [{ group: 'g'.repeat(200), role: 'viewer' }])).status).toBe(200)
    expect((await put('owner', Array.from({ length: 100 }, (_, i) => ({ group: `g${i}`, role: 'viewer' })))).status).toBe(200)
    expect([(await stored()).length, Number(await events())]).toEqual([100, 2])
  })
})
