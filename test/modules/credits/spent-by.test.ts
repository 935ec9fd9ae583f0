import { describe, expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'
import { teamEmail } from '../../../src/modules/workspaces/model'

/**
 * A team workspace's credits are pooled (its own balance), and each charge names the person who spent
 * them (`usage.actor_id`, issue 35), so the workspace's admins can see who spent what; on both back ends.
 */
for (const b of backEnds) describe.skipIf(b.skip)(`who spent a workspace's credits, on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('two members each summarize a text: the workspace pays 2 + 2, each charge names its member, their own balances are untouched', async () => {
    const t = createTestApp({ store: await open() })
    const team = await teamWorkspace(t, 'Pool')
    const ann = await person(t, 'ann@example.com')
    const ben = await person(t, 'ben@example.com')
    const annKey = await memberKey(t, team, ann.id, 'editor')
    const benKey = await memberKey(t, team, ben.id, 'admin')
    // a team on the free plan has no grant of its own: the operator tops it up (docs/decisions.md "Workspaces")
    await t.services.accounts.addPurchasedCredits(teamEmail(team), 10)
    for (const key of [annKey, benKey, annKey]) {
      const r = await t.call('POST', '/v1/summaries', { token: key, body: { text: 'We agreed to move the launch to May and to hire two engineers.' } })
      expect(r.status).toBe(200)
      expect(r.body.creditsCharged).toBe(2)
    }
    const rows = await t.store.all<{ account_id: string; actor_id: string | null; credits: number | string }>(
      "SELECT account_id, actor_id, credits FROM usage WHERE operation = 'createSummary' ORDER BY created_at, id")
    expect(rows.map(r => ({ ...r, credits: Number(r.credits) }))).toEqual([
      { account_id: team, actor_id: ann.id, credits: 2 },
      { account_id: team, actor_id: ben.id, credits: 2 },
      { account_id: team, actor_id: ann.id, credits: 2 },
    ])
    expect((await t.call('GET', '/v1/usage', { token: benKey })).body.spentThisPeriod).toBe(6)
    expect((await t.call('GET', '/v1/usage', { token: ann.personalKey })).body.spentThisPeriod).toBe(0)
    // a person in their personal workspace is the one who spends there
    expect((await t.call('POST', '/v1/summaries', { token: ann.personalKey, body: { text: 'A note to self about the launch.' } })).status).toBe(200)
    expect(await t.store.get("SELECT account_id, actor_id FROM usage WHERE operation = 'createSummary' AND account_id = ?", [ann.id])).toEqual({ account_id: ann.id, actor_id: ann.id })
  })
})
