import { describe, expect, test } from 'bun:test'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds, type BackEnd } from '../../helpers/backends'
import { SPEC_COSTS, SPEC_ERROR_STATUS } from '../../helpers/interface'
import { ApiError } from '../../../src/http/errors'
import { closedAfterAll } from '../../helpers/closing'

const EMAIL = 'user@example.com'
/** SPEC.md "Credits": what each plan grants a month. */
const PLAN_GRANT = { free: 60, pro: 2000 }
/** SPEC.md "Usage": the fields of one entry of `recent`, and the sources an entry may name. */
const ENTRY_FIELDS = ['createdAt', 'credits', 'id', 'noteId', 'operation', 'source']
const ENTRY_SOURCES = ['api_key', 'oauth', 'mcp']

/** The stores the tests of one back end opened, closed after them. */
const opened = closedAfterAll()

async function setup(backEnd: BackEnd, plan: 'free' | 'pro' = 'free') {
  const clock = fixedClock('2026-11-10T12:00:00.000Z')
  const store = await backEnd.open()
  opened.push(store)
  const t = createTestApp({ store, clock, env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
  const token = await t.key({ email: EMAIL, plan })
  const accountId = (await t.services.accounts.requireAccount(EMAIL)).id
  const rows = async () => Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM usage WHERE account_id = ?', [accountId]))!.n)
  const balance = () => t.services.credits.balance(accountId)
  return { ...t, token, accountId, rows, balance }
}

/** A getUsage answer holds only entries of the interface's shape. */
function expectInterfaceEntries(recent: Record<string, unknown>[]) {
  for (const e of recent) {
    expect(Object.keys(e).sort()).toEqual(ENTRY_FIELDS)
    expect(Number.isInteger(e.credits)).toBe(true)
    expect(ENTRY_SOURCES).toContain(e.source as string)
    expect(e.noteId === null || typeof e.noteId === 'string').toBe(true)
    expect(new Date(e.createdAt as string).toISOString()).toBe(e.createdAt as string)
  }
}

for (const b of backEnds) describe.skipIf(b.skip)(`credits on ${b.name}`, () => {
  describe('top-ups', () => {
    test('a top-up writes a usage row; the balance is grants + top-ups - charges + refunds', async () => {
      const t = await setup(b)
      // The ledger, oldest first, as data: what each step does and the balance it leaves.
      const steps = [
        { do: 'topUp', credits: 25, left: { grantRemaining: 60, purchasedRemaining: 25, totalRemaining: 85 } },
        { do: 'charge', credits: 30, left: { grantRemaining: 30, purchasedRemaining: 25, totalRemaining: 55 } },
        { do: 'charge', credits: 2, left: { grantRemaining: 28, purchasedRemaining: 25, totalRemaining: 53 } },
        { do: 'topUp', credits: 10, left: { grantRemaining: 28, purchasedRemaining: 35, totalRemaining: 63 } },
        { do: 'charge', credits: 40, left: { grantRemaining: 0, purchasedRemaining: 23, totalRemaining: 23 } },
        { do: 'refund', credits: 40, left: { grantRemaining: 28, purchasedRemaining: 35, totalRemaining: 63 } },
      ] as const
      let lastCharge = ''
      for (const step of steps) {
        if (step.do === 'topUp') await t.services.accounts.addPurchasedCredits(EMAIL, step.credits)
        if (step.do === 'charge') lastCharge = (await t.services.credits.charge({ accountId: t.accountId, operation: 'createSummary', credits: step.credits, source: 'api_key' })).usageId
        if (step.do === 'refund') expect(await t.services.credits.refund(lastCharge)).toEqual({ refunded: step.credits })
        expect(await t.balance()).toMatchObject(step.left)
      }
      expect(await t.rows()).toBe(steps.length)
      const sum = (kind: string) => steps.filter(s => s.do === kind).reduce((n, s) => n + s.credits, 0)
      expect((await t.balance()).totalRemaining).toBe(PLAN_GRANT.free + sum('topUp') - sum('charge') + sum('refund'))

      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      // `recent` is the interface's "recent charges": charges and refunds; the top-ups stay in the ledger only
      expect(usage.recent.map((e: any) => [e.operation, e.credits, e.source, e.noteId])).toEqual([
        ['refund:createSummary', -40, 'api_key', null],
        ['createSummary', 40, 'api_key', null],
        ['createSummary', 2, 'api_key', null],
        ['createSummary', 30, 'api_key', null],
      ])
      expectInterfaceEntries(usage.recent)
      // A top-up is not spending: this period's spending is the charges less the refund.
      expect(usage.spentThisPeriod).toBe(32)
      expect(usage.balance).toMatchObject({ plan: 'free', grantTotal: 60, grantRemaining: 28, purchasedRemaining: 35, totalRemaining: 63 })
    })

    test('a top-up cannot be refunded', async () => {
      const t = await setup(b)
      await t.services.accounts.addPurchasedCredits(EMAIL, 5)
      const topUp = (await t.store.get<{ id: string }>("SELECT id FROM usage WHERE operation = 'topUp'"))!
      expect(await t.services.credits.refund(topUp.id)).toEqual({ refunded: 0 })
      expect(await t.balance()).toMatchObject({ purchasedRemaining: 5, totalRemaining: 65 })
      expect(await t.rows()).toBe(1)
    })
  })

  describe('charges', () => {
    test('a charge over the balance is 402 insufficient_credits and changes nothing', async () => {
      const t = await setup(b)
      await t.services.credits.charge({ accountId: t.accountId, operation: 'setup', credits: 56, source: 'api_key' })
      const before = { balance: await t.balance(), rows: await t.rows() }
      let refused: unknown
      try {
        await t.services.credits.charge({ accountId: t.accountId, operation: 'createSummary', credits: 5, source: 'api_key' })
      } catch (err) {
        refused = err
      }
      expect(refused).toBeInstanceOf(ApiError)
      const e = refused as ApiError
      expect({ code: e.code, status: SPEC_ERROR_STATUS[e.code] }).toEqual({ code: 'insufficient_credits', status: 402 })
      expect(e.message).toContain('createSummary needs 5 credits but 4 remain')
      expect({ balance: await t.balance(), rows: await t.rows() }).toEqual(before)
    })

    test('the check before the work and the charge refuse with the same message', async () => {
      const t = await setup(b)
      await t.services.credits.charge({ accountId: t.accountId, operation: 'setup', credits: 59, source: 'api_key' })
      const messageOf = async (fn: () => Promise<unknown>) => {
        try {
          await fn()
        } catch (err) {
          return (err as ApiError).message
        }
        return 'not refused'
      }
      const early = await messageOf(() => t.services.credits.ensureCovers(t.accountId, 'askNoteQuestion', 3))
      const late = await messageOf(() => t.services.credits.charge({ accountId: t.accountId, operation: 'askNoteQuestion', credits: 3, source: 'api_key' }))
      expect(early).toContain('askNoteQuestion needs 3 credits but 1 remain')
      expect(late).toBe(early)
    })

    test('the 402 of a route says what it needs and what remains', async () => {
      const t = await setup(b)
      await t.services.credits.charge({ accountId: t.accountId, operation: 'setup', credits: 59, source: 'api_key' })
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: 'We decided to ship on Friday.' } })
      expect(r.status).toBe(402)
      expect(r.body.error.code).toBe('insufficient_credits')
      expect(r.body.error.message).toContain('createSummary needs 2 credits but 1 remain')
    })

    // As data: a starting balance, the credits each attempt asks for, how many attempts run at once,
    // and what must come of them.
    test.each([
      { start: 7, each: 1, attempts: 20, ok: 7, left: 0 },
      { start: 7, each: 3, attempts: 10, ok: 2, left: 1 },
      { start: 10, each: 5, attempts: 6, ok: 2, left: 0 },
      { start: 0, each: 1, attempts: 5, ok: 0, left: 0 },
    ])('repeated charges at once from $start credits, $each each: $ok succeed, $left left, never below zero', async ({ start, each, attempts, ok, left }) => {
      const t = await setup(b)
      if (start < 60) await t.services.credits.charge({ accountId: t.accountId, operation: 'setup', credits: 60 - start, source: 'api_key' })
      const seen: number[] = []
      const results = await Promise.allSettled(Array.from({ length: attempts }, async () => {
        await Promise.resolve()
        const r = await t.services.credits.charge({ accountId: t.accountId, operation: 'askNoteQuestion', credits: each, source: 'api_key' })
        seen.push(r.balance.totalRemaining)
      }))
      expect(results.filter(r => r.status === 'fulfilled')).toHaveLength(ok)
      for (const r of results) if (r.status === 'rejected') expect((r.reason as ApiError).code).toBe('insufficient_credits')
      expect(Math.min(left, ...seen)).toBeGreaterThanOrEqual(0)
      expect((await t.balance()).totalRemaining).toBe(left)
    })

    test('a sandbox key is never charged and leaves no usage row', async () => {
      const t = await setup(b)
      const sandbox = await t.key({ email: EMAIL, sandbox: true })
      const r = await t.call('POST', '/v1/summaries', { token: sandbox, body: { text: 'We decided to ship on Friday.' } })
      expect({ status: r.status, charged: r.body.creditsCharged, remaining: r.headers.get('x-credits-remaining') }).toEqual({ status: 200, charged: 0, remaining: '60' })
      expect(await t.rows()).toBe(0)
    })
  })

  describe('refunds', () => {
    test('a refund restores exactly the balance before the charge, once', async () => {
      const t = await setup(b)
      await t.services.accounts.addPurchasedCredits(EMAIL, 4)
      await t.services.credits.charge({ accountId: t.accountId, operation: 'setup', credits: 58, source: 'api_key' })
      const before = await t.balance()
      expect(before).toMatchObject({ grantRemaining: 2, purchasedRemaining: 4, totalRemaining: 6 })
      const c = await t.services.credits.charge({ accountId: t.accountId, operation: 'completeUpload', credits: 5, source: 'oauth', noteId: 'note_x' })
      expect(await t.balance()).toMatchObject({ grantRemaining: 0, purchasedRemaining: 1, totalRemaining: 1 })
      expect(await t.services.credits.refund(c.usageId)).toEqual({ refunded: 5 })
      expect(await t.balance()).toEqual(before)
      expect(await t.services.credits.refund(c.usageId)).toEqual({ refunded: 0 })
      expect(await t.balance()).toEqual(before)
    })
  })

  describe('costs and plans', () => {
    // SPEC.md "Endpoints" (Cost) and DECISIONS.md "Uploads": one credit per started minute, at least one.
    test.each([
      ['createSummary', null, 2],
      ['askNoteQuestion', null, 1],
      ['completeUpload', 61, 2],
      ['completeUpload', 60, 1],
      ['completeUpload', 0.5, 1],
      ['completeUpload', null, 1],
      ['createTranscription', 75, 2],
      ['createYoutubeSummary', 212, 4],
    ] as const)('%s of %p seconds costs %i', async (op, seconds, credits) => {
      // a price is read from the operations table, whatever the store
      const t = createTestApp()
      expect(t.services.credits.cost(op, seconds)).toBe(credits)
    })

    test('getUsage and GET /v1 publish the interface\'s cost table and plans', async () => {
      const t = await setup(b, 'pro')
      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      expect(usage.costs).toEqual(SPEC_COSTS)
      expect(usage.balance).toMatchObject({ plan: 'pro', grantTotal: PLAN_GRANT.pro })
      const index = (await t.call('GET', '/v1')).body
      expect(index.credits.costs).toEqual(SPEC_COSTS)
      expect(index.credits.plans).toEqual({ free: { monthlyGrant: PLAN_GRANT.free }, pro: { monthlyGrant: PLAN_GRANT.pro } })
    })
  })
})
