import { SqliteStore } from '../../src/db/store'
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { loadConfig } from '../../src/config'
import { createIdGenerator } from '../../src/ids'
import { createServices } from '../../src/services'
import { fixedClock } from '../../src/clock'
import { run, tempDir } from '../helpers/process'

function ledger(dbPath = ':memory:', at = '2026-11-10T12:00:00.000Z') {
  const clock = fixedClock(at)
  const db = openDatabase(dbPath)
  const services = createServices({ config: loadConfig({ NOTESVC_DATA_DIR: "/tmp/notesvc-ledger-unused" }), store: new SqliteStore(db), clock, ids: createIdGenerator(() => clock.now().getTime()) })
  const account = services.accounts.ensureAccount('ledger@example.com')
  const sum = () => db.query<{ n: number }, [string]>('SELECT coalesce(sum(credits), 0) AS n FROM usage WHERE account_id = ?').get(account.id)!.n
  return { db, clock, services, account, usage: services.credits, sum }
}

describe('the credit ledger', () => {
  test('50 charges from 5 processes against 10 credits: exactly 10 succeed, and the ledger sums to the balance', async () => {
    const d = tempDir('notesvc-ledger-')
    try {
      const path = join(d.path, 'ledger.db')
      const l = ledger(path)
      l.usage.charge({ accountId: l.account.id, operation: 'setup', credits: 50, source: 'api_key' })
      expect(l.usage.balance(l.account.id).totalRemaining).toBe(10)
      const results = await Promise.all(Array.from({ length: 5 }, () => run(['bun', 'run', 'test/fixtures/charge-worker.ts', path, l.account.id, '10'])))
      const counts = results.map(r => {
        expect(r.code).toBe(0)
        return JSON.parse(r.stdout) as { ok: number; refused: number }
      })
      expect(counts.reduce((n, c) => n + c.ok, 0)).toBe(10)
      expect(counts.reduce((n, c) => n + c.refused, 0)).toBe(40)
      const b = l.usage.balance(l.account.id)
      expect(b.totalRemaining).toBe(0)
      expect(l.sum()).toBe(b.grantTotal - b.totalRemaining)
    } finally {
      d.remove()
    }
  }, 60_000)

  test('grant first, then prepaid; a refused charge changes nothing', () => {
    const l = ledger()
    l.services.accounts.addPurchasedCredits('ledger@example.com', 5)
    l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 58, source: 'api_key' })
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 2, purchasedRemaining: 5, totalRemaining: 7 })
    l.usage.charge({ accountId: l.account.id, operation: 'b', credits: 4, source: 'api_key' })
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 3, totalRemaining: 3 })
    expect(() => l.usage.charge({ accountId: l.account.id, operation: 'c', credits: 4, source: 'api_key' })).toThrow('needs 4 credits but 3 remain')
    expect(l.usage.balance(l.account.id).totalRemaining).toBe(3)
    expect(l.sum()).toBe(62)
  })

  test('the grant resets at 00:00 UTC on the first of the month; prepaid credits carry over', () => {
    const l = ledger(':memory:', '2026-11-30T23:59:59.000Z')
    l.services.accounts.addPurchasedCredits('ledger@example.com', 10)
    l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 65, source: 'api_key' })
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 5, grantResetsAt: '2026-12-01T00:00:00.000Z' })
    l.clock.set('2026-12-01T00:00:00.000Z')
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantTotal: 60, grantRemaining: 60, purchasedRemaining: 5, grantResetsAt: '2027-01-01T00:00:00.000Z' })
    expect(l.services.usage.usage(l.account.id, 50).spentThisPeriod).toBe(0)
    l.usage.charge({ accountId: l.account.id, operation: 'b', credits: 1, source: 'api_key' })
    expect(l.usage.balance(l.account.id).grantRemaining).toBe(59)
  })

  test('a pro plan grants 2000 a month', () => {
    const l = ledger()
    l.services.accounts.setPlan('ledger@example.com', 'pro')
    expect(l.usage.balance(l.account.id)).toMatchObject({ plan: 'pro', grantTotal: 2000, totalRemaining: 2000 })
  })

  test('a refund gives back exactly what the charge took, once', () => {
    const l = ledger()
    l.services.accounts.addPurchasedCredits('ledger@example.com', 3)
    l.usage.charge({ accountId: l.account.id, operation: 'a', credits: 59, source: 'api_key' })
    const c = l.usage.charge({ accountId: l.account.id, operation: 'completeUpload', credits: 3, source: 'oauth', noteId: 'note_x' })
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 0, purchasedRemaining: 1 })
    expect(l.usage.refund(c.usageId)).toEqual({ refunded: 3 })
    expect(l.usage.balance(l.account.id)).toMatchObject({ grantRemaining: 1, purchasedRemaining: 3 })
    expect(l.usage.refund(c.usageId)).toEqual({ refunded: 0 })
    const recent = l.services.usage.usage(l.account.id, 10).recent
    expect(recent[0]).toMatchObject({ operation: 'refund:completeUpload', credits: -3, source: 'oauth', noteId: 'note_x' })
    expect(l.sum()).toBe(59)
  })
})
