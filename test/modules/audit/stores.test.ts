import { describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import { fixedClock } from '../../../src/clock'
import { createIdGenerator } from '../../../src/ids'
import { createAuditRepo } from '../../../src/modules/audit/repo'
import { createAuditService } from '../../../src/modules/audit/service'

/** The audit log on each store: append-only in the database itself (migration 17), pruned by age, paged and exported. */

const opened = closedAfterAll()

for (const b of backEnds) describe.skipIf(b.skip)(`the audit log on ${b.name}`, () => {
  async function audit() {
    const store = await b.open()
    opened.push(store)
    const clock = fixedClock('2026-11-01T00:00:00.000Z')
    const service = createAuditService({ repo: createAuditRepo(store), clock, ids: createIdGenerator(() => clock.now().getTime()) })
    return { store, clock, service }
  }

  test('an event cannot be changed by any UPDATE; the log\'s own retention deletes old ones', async () => {
    const { store, clock, service } = await audit()
    await service.record({ accountId: 'acct_a', actor: { type: 'user', id: 'acct_a' }, action: 'signin.succeeded', origin: { ip: '192.0.2.7', userAgent: 'ua' } })
    clock.advance(40 * 86_400_000)
    await service.record({ accountId: 'acct_a', actor: { type: 'key', id: 'key_1' }, action: 'note.deleted', target: { type: 'note', id: 'note_1' } })

    // refused by the database, whatever code sends it: a hidden sign-in, a forged address
    for (const sql of ["UPDATE audit_events SET action = 'signout'", "UPDATE audit_events SET ip = '10.0.0.1' WHERE action = 'signin.succeeded'"]) {
      await expect(store.run(sql)).rejects.toThrow(/append-only/)
    }
    const rows = await store.all<{ action: string; ip: string | null }>('SELECT action, ip FROM audit_events ORDER BY at')
    expect(rows).toEqual([{ action: 'signin.succeeded', ip: '192.0.2.7' }, { action: 'note.deleted', ip: null }])

    expect(await service.prune(30)).toBe(1)
    expect((await service.list('acct_a', { limit: 10 })).items.map(e => e.action)).toEqual(['note.deleted'])
  })

  test('the prune removes exactly the old events, in batches of its size, each its own statement', async () => {
    const store = await b.open()
    opened.push(store)
    // every DELETE the repo sends, seen on the way: one unbounded DELETE (the bug) is one statement
    const deletes: number[] = []
    const counted = new Proxy(store, {
      get: (target, prop) => prop === 'run'
        ? async (sql: string, params?: unknown[]) => {
          const n = await target.run(sql, params as never)
          if (/^DELETE/i.test(sql)) deletes.push(n)
          return n
        }
        : Reflect.get(target, prop),
    })
    const clock = fixedClock('2026-01-01T00:00:00.000Z')
    const service = createAuditService({ repo: createAuditRepo(counted, { pruneBatch: 7 }), clock, ids: createIdGenerator(() => clock.now().getTime()) })
    for (let i = 0; i < 23; i++) {
      await service.record({ accountId: 'acct_a', actor: { type: 'operator' }, action: 'plan.changed', details: { n: i } })
      clock.advance(1000)
    }
    clock.set('2026-03-01T00:00:00.000Z')
    for (let i = 23; i < 28; i++) await service.record({ accountId: 'acct_a', actor: { type: 'operator' }, action: 'plan.changed', details: { n: i } })
    clock.set('2026-03-20T00:00:00.000Z')

    expect(await service.prune(30)).toBe(23)
    // 23 old events, 7 a statement: 7 + 7 + 7 + 2
    expect(deletes).toEqual([7, 7, 7, 2])
    const left: number[] = []
    for await (const e of service.export('acct_a')) left.push(e.details.n as number)
    expect(left).toEqual([23, 24, 25, 26, 27])
    // nothing more to prune: one statement that removes nothing
    expect(await service.prune(30)).toBe(0)
    expect(deletes.slice(4)).toEqual([0])
  })

  test('pages and exports walk ties in time by id, every event once', async () => {
    const { service } = await audit()
    // twelve events in the same millisecond, two accounts interleaved
    for (let i = 0; i < 12; i++) await service.record({ accountId: i % 3 === 0 ? 'acct_b' : 'acct_a', actor: { type: 'operator' }, action: 'plan.changed', details: { n: i } })
    const pages: number[][] = []
    let cursor: string | null = null
    do {
      const page: Awaited<ReturnType<typeof service.list>> = await service.list('acct_a', { limit: 3, cursor })
      pages.push(page.items.map(e => e.details.n as number))
      cursor = page.nextCursor
    } while (cursor)
    expect(pages).toEqual([[11, 10, 8], [7, 5, 4], [2, 1]])
    const exported: number[] = []
    for await (const e of service.export('acct_b')) exported.push(e.details.n as number)
    expect(exported).toEqual([0, 3, 6, 9])
    const all: number[] = []
    for await (const e of service.export(null)) all.push(e.details.n as number)
    expect(all).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
  })

  test('an export longer than one batch (500 events a query) has every event once, in order', async () => {
    const { store, service } = await audit()
    await store.transaction(async () => {
      for (let i = 0; i < 1201; i++) await service.record({ accountId: 'acct_a', actor: { type: 'operator' }, action: 'plan.changed', details: { n: i } })
    })
    const seen: number[] = []
    for await (const e of service.export('acct_a')) seen.push(e.details.n as number)
    expect(seen.length).toBe(1201)
    expect(seen.every((n, i) => n === i)).toBe(true)
  })
})
