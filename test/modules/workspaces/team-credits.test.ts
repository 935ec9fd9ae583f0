import { expect, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { memberKey, person, teamWorkspace } from '../../helpers/team-workspace'
import { teamEmail } from '../../../src/modules/workspaces/model'

/**
 * A team's credits are pooled on the team's row (docs/decisions.md "Workspaces"): the operator tops
 * them up with the team's reserved email (`accounts credit --email <id>@workspace.invalid`), every
 * member's key reads the same balance, and a member's own account keeps its own.
 */
test('the operator credits a team by its reserved email; its members read the pooled balance, their own accounts unchanged', async () => {
  const t = createTestApp()
  const team = await teamWorkspace(t, 'Pool')
  const ana = await person(t, 'ana@example.com')
  const bo = await person(t, 'bo@example.com')
  const anaTeam = await memberKey(t, team, ana.id, 'editor')
  const boTeam = await memberKey(t, team, bo.id, 'viewer')
  const total = async (key: string) => (await t.call('GET', '/v1/usage', { token: key })).body.balance.purchasedRemaining
  const before = { team: await total(anaTeam), ana: await total(ana.personalKey) }

  const credited = await t.services.accounts.addPurchasedCredits(teamEmail(team), 40)
  expect(credited.id).toBe(team)
  expect({ ana: await total(anaTeam), bo: await total(boTeam), anaOwn: await total(ana.personalKey) })
    .toEqual({ ana: before.team + 40, bo: before.team + 40, anaOwn: before.ana })
  // a person cannot take the reserved email: sign-up refuses it, so no person's key is ever made for it
  await expect(t.services.accounts.createKey({ email: teamEmail(team) })).rejects.toThrow(/reserved/)
})
