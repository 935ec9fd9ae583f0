import { OPERATION_TABLE } from '../../../src/operations'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openDatabase } from '../../../src/db/database'
import { openStore, type Store } from '../../../src/db/store'
import { createIdGenerator } from '../../../src/ids'
import { fixedClock } from '../../../src/clock'
import { createCreditsRepo } from '../../../src/modules/credits/repo'
import { createCreditsService } from '../../../src/modules/credits/service'
import { createAccountsRepo } from '../../../src/modules/accounts/repo'
import { createAccountsService, keyCacheFor } from '../../../src/modules/accounts/service'
import { createUsageService } from '../../../src/modules/usage/service'
import { backEnds, freshPostgresUrl, type BackEnd } from '../../helpers/backends'
import { run, tempDir } from '../../helpers/process'
import { closedAfterAll } from '../../helpers/closing'

const opened = closedAfterAll()

/** The ledger's services (credits, the accounts that top up, the usage report) on `store`, at a fixed time. */
async function ledger(store: Store, at = '2026-11-10T12:00:00.000Z') {
  opened.push(store)
  const clock = fixedClock(at)
  const ids = createIdGenerator(() => clock.now().getTime())
  const credits = createCreditsService({ repo: createCreditsRepo(store), clock, ids, topUpCommand: 'ask the operator', operations: OPERATION_TABLE })
  const accounts = createAccountsService({ repo: createAccountsRepo(store), clock, ids, keyCache: keyCacheFor(store, true), credits })
  const usage = createUsageService({ credits, clock })
  const account = await accounts.ensureAccount('ledger@example.com')
  const sum = async () => Number((await store.get<{ n: number | string }>('SELECT coalesce(sum(credits), 0) AS n FROM usage WHERE account_id = ?', [account.id]))!.n)
  return { store, clock, services: { accounts, credits, usage }, account, usage: credits, sum }
}

/** Where the charging processes meet: a SQLite file, or a fresh PostgreSQL database. */
async function sharedTarget(b: BackEnd, dir: string): Promise<string> {
  return b.name === 'sqlite' ? join(dir, 'ledger.db') : freshPostgresUrl()
}

for (const b of backEnds) describe.skipIf(b.skip)(`the credit ledger on ${b.name}`, () => {
  test('50 charges from 5 processes against 10 credits: exactly 10 succeed, and the ledger sums to the balance', async () => {
    const d = tempDir('notesvc-ledger-')
    try {
      const target = await sharedTarget(b, d.path)
      const l = await ledger(openStore(target, { sqlite: () => openDatabase(target) }))
      await l.usage.charge({ accountId: l.account.id, operation: 'setup', credits: 50, source: 'api_key' })
      expect((await l.usage.balance(l.account.id)).totalRemaining).toBe(10)
      const results = await Promise.all(Array.from({ length: 5 }, () => run(['bun', 'run', 'test/fixtures/charge-worker.ts', target, l.account.id, '10'])))
      const counts = results.map(r => {
        expect({ code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ code: 0, stderr: '' })
        return JSON.parse(r.stdout) as { ok: number; refused: number }
      })
      expect(counts.reduce((n, c) => n + c.ok, 0)).toBe(10)
      expect(counts.reduce((n, c) => n + c.refused, 0)).toBe(40)
      const balance = await l.usage.balance(l.account.id)
      expect(balance.totalRemaining).toBe(0)
      expect(await l.sum()).toBe(balance.grantTotal - balance.totalRemaining)
    } finally {
      d.remove()
    }
  }, 60_000)

  test('grant first, then prepaid; a refused charge changes nothing', async () => {
    const l = await ledger(await b.open())
    await l.services.accounts.addPurchasedCredits('ledger@example.com', 5)
    await l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 58, source: 'api_key' })
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 2, purchasedRemaining: 5, totalRemaining: 7 })
    await l.usage.charge({ accountId: l.account.id, operation: 'b', credits: 4, source: 'api_key' })
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 3, totalRemaining: 3 })
    await expect(l.usage.charge({ accountId: l.account.id, operation: 'c', credits: 4, source: 'api_key' })).rejects.toThrow('needs 4 credits but 3 remain')
    expect((await l.usage.balance(l.account.id)).totalRemaining).toBe(3)
    expect(await l.sum()).toBe(62)
  })

  test('the grant resets at 00:00 UTC on the first of the month; prepaid credits carry over', async () => {
    const l = await ledger(await b.open(), '2026-11-30T23:59:59.000Z')
    await l.services.accounts.addPurchasedCredits('ledger@example.com', 10)
    await l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 65, source: 'api_key' })
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 5, grantResetsAt: '2026-12-01T00:00:00.000Z' })
    l.clock.set('2026-12-01T00:00:00.000Z')
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantTotal: 60, grantRemaining: 60, purchasedRemaining: 5, grantResetsAt: '2027-01-01T00:00:00.000Z' })
    expect((await l.services.usage.usage(l.account.id, 50)).spentThisPeriod).toBe(0)
    await l.usage.charge({ accountId: l.account.id, operation: 'b', credits: 1, source: 'api_key' })
    expect((await l.usage.balance(l.account.id)).grantRemaining).toBe(59)
  })

  test('a pro plan grants 2000 a month', async () => {
    const l = await ledger(await b.open())
    await l.services.accounts.setPlan('ledger@example.com', 'pro')
    expect(await l.usage.balance(l.account.id)).toMatchObject({ plan: 'pro', grantTotal: 2000, totalRemaining: 2000 })
  })

  test('a refund gives back exactly what the charge took, once', async () => {
    const l = await ledger(await b.open())
    await l.services.accounts.addPurchasedCredits('ledger@example.com', 3)
    await l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 59, source: 'api_key' })
    const c = await l.usage.charge({ accountId: l.account.id, operation: 'completeUpload', credits: 3, source: 'oauth', noteId: 'note_x' })
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 1 })
    expect(await l.usage.refund(c.usageId)).toEqual({ refunded: 3 })
    expect(await l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 1, purchasedRemaining: 3 })
    expect(await l.usage.refund(c.usageId)).toEqual({ refunded: 0 })
    const recent = (await l.services.usage.usage(l.account.id, 10)).recent
    expect(recent[0]).toMatchObject({ operation: 'refund:completeUpload', credits: -3, source: 'oauth', noteId: 'note_x' })
    expect(await l.sum()).toBe(59)
  })

  test('one charge refunded at once through two services on the same database is refunded once', async () => {
    const first = await ledger(await b.open())
    const c = await first.usage.charge({ accountId: first.account.id, operation: 'completeUpload', credits: 4, source: 'api_key' })
    // A second set of services on the same database: another node (on SQLite, the same connection).
    const second = createCreditsService({ repo: createCreditsRepo(first.store), clock: first.clock, ids: createIdGenerator(), topUpCommand: '', operations: OPERATION_TABLE })
    const results = await Promise.all([first.usage.refund(c.usageId), second.refund(c.usageId), first.usage.refund(c.usageId), second.refund(c.usageId)])
    expect(results.map(r => r.refunded).sort()).toEqual([0, 0, 0, 4])
    expect(await first.usage.balance(first.account.id)).toMatchObject({ grantRemaining: 60 })
    expect(await first.sum()).toBe(0)
  })

  test('an account created at once from two places is one account', async () => {
    const l = await ledger(await b.open())
    const accounts = await Promise.all(Array.from({ length: 6 }, (_, i) => l.services.accounts.ensureAccount(i % 2 ? 'Twice@Example.com' : 'twice@example.com')))
    expect(new Set(accounts.map(a => a.id)).size).toBe(1)
  })
})
