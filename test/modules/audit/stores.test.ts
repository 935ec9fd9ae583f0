import { describe, expect, test } from 'bun:test'
import { backEnds, freshPostgresUrl } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import { createTestApp } from '../../helpers/app'
import { PostgresStore } from '../../../src/db/store'
import { fixedClock } from '../../../src/clock'
import { createIdGenerator } from '../../../src/ids'
import { createAuditRepo } from '../../../src/modules/audit/repo'
import { createAuditService } from '../../../src/modules/audit/service'

/**
 * The audit log on each store: append-only in the database itself (migrations 17 and 19), reads counted
 * in one row per slot, pruned by age, paged and exported; and reads at once on two nodes of one
 * PostgreSQL database.
 */

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

    await service.record({ accountId: 'acct_a', actor: { type: 'key', id: 'key_1' }, action: 'note.transcript_exported', target: { type: 'note', id: 'note_2' }, origin: { ip: '192.0.2.7' } })

    // refused by the database, whatever code sends it: a hidden sign-in, a forged address, a write
    // counted as if repeated, a read's address or time rewritten, its count lowered (migration 19)
    for (const sql of [
      "UPDATE audit_events SET action = 'signout'",
      "UPDATE audit_events SET ip = '10.0.0.1' WHERE action = 'signin.succeeded'",
      "UPDATE audit_events SET count = count + 1 WHERE action = 'note.deleted'",
      "UPDATE audit_events SET count = count + 1, ip = '10.0.0.1' WHERE action = 'note.transcript_exported'",
      "UPDATE audit_events SET count = count + 1, at = '2020-01-01T00:00:00.000Z' WHERE action = 'note.transcript_exported'",
      "UPDATE audit_events SET count = 0 WHERE action = 'note.transcript_exported'",
    ]) {
      await expect(store.run(sql)).rejects.toThrow(/append-only/)
    }
    await store.run("DELETE FROM audit_events WHERE action = 'note.transcript_exported'")
    const rows = await store.all<{ action: string; ip: string | null }>('SELECT action, ip FROM audit_events ORDER BY at')
    expect(rows).toEqual([{ action: 'signin.succeeded', ip: '192.0.2.7' }, { action: 'note.deleted', ip: null }])

    expect(await service.prune(30)).toBe(1)
    expect((await service.list('acct_a', { limit: 10 })).items.map(e => e.action)).toEqual(['note.deleted'])
  })

  // Fails on the old code: 2,000 reads were 2,000 rows (issue 29).
  test('reads are counted: one row per actor, action, target and address in each ten-minute slot; writes stay one row each', async () => {
    const { store, clock, service } = await audit()
    clock.set('2026-11-01T10:00:05.000Z')
    const read = (o: { key?: string; note?: string; ip?: string; action?: 'note.transcript_exported' | 'note.media_read'; format?: string; ua?: string } = {}) => service.record({
      accountId: 'acct_a', actor: { type: 'key', id: o.key ?? 'key_1' }, action: o.action ?? 'note.transcript_exported', target: { type: 'note', id: o.note ?? 'note_1' },
      origin: { ip: o.ip ?? '192.0.2.7', userAgent: o.ua ?? 'client/1' }, details: { format: o.format ?? 'json', sandbox: false },
    })
    for (let i = 0; i < 2000; i++) await read()
    clock.set('2026-11-01T10:03:00.000Z')
    // another format and user agent in the same slot: the same row (they are the first read's)
    await read({ format: 'srt', ua: 'client/2' })
    clock.set('2026-11-01T10:09:59.999Z')
    await read()
    // apart: another key, note, address, action; and the next slot
    await read({ key: 'key_2' })
    await read({ note: 'note_2' })
    await read({ ip: '198.51.100.9' })
    await read({ action: 'note.media_read' })
    clock.set('2026-11-01T10:10:00.000Z')
    await read()
    // writes: one row each, however alike
    await service.record({ accountId: 'acct_a', actor: { type: 'key', id: 'key_1' }, action: 'note.deleted', target: { type: 'note', id: 'note_1' } })
    await service.record({ accountId: 'acct_a', actor: { type: 'key', id: 'key_1' }, action: 'note.deleted', target: { type: 'note', id: 'note_1' } })

    const events: any[] = []
    for await (const e of service.export('acct_a')) events.push(e)
    expect(events.map(e => ({ action: e.action, key: e.actor.id, note: e.target.id, ip: e.ip, at: e.at, lastAt: e.lastAt, count: e.count, ua: e.userAgent, format: e.details.format }))).toEqual([
      { action: 'note.transcript_exported', key: 'key_1', note: 'note_1', ip: '192.0.2.7', at: '2026-11-01T10:00:05.000Z', lastAt: '2026-11-01T10:09:59.999Z', count: 2002, ua: 'client/1', format: 'json' },
      { action: 'note.transcript_exported', key: 'key_2', note: 'note_1', ip: '192.0.2.7', at: '2026-11-01T10:09:59.999Z', lastAt: '2026-11-01T10:09:59.999Z', count: 1, ua: 'client/1', format: 'json' },
      { action: 'note.transcript_exported', key: 'key_1', note: 'note_2', ip: '192.0.2.7', at: '2026-11-01T10:09:59.999Z', lastAt: '2026-11-01T10:09:59.999Z', count: 1, ua: 'client/1', format: 'json' },
      { action: 'note.transcript_exported', key: 'key_1', note: 'note_1', ip: '198.51.100.9', at: '2026-11-01T10:09:59.999Z', lastAt: '2026-11-01T10:09:59.999Z', count: 1, ua: 'client/1', format: 'json' },
      { action: 'note.media_read', key: 'key_1', note: 'note_1', ip: '192.0.2.7', at: '2026-11-01T10:09:59.999Z', lastAt: '2026-11-01T10:09:59.999Z', count: 1, ua: 'client/1', format: 'json' },
      { action: 'note.transcript_exported', key: 'key_1', note: 'note_1', ip: '192.0.2.7', at: '2026-11-01T10:10:00.000Z', lastAt: '2026-11-01T10:10:00.000Z', count: 1, ua: 'client/1', format: 'json' },
      { action: 'note.deleted', key: 'key_1', note: 'note_1', ip: null, at: '2026-11-01T10:10:00.000Z', lastAt: '2026-11-01T10:10:00.000Z', count: 1, ua: null, format: undefined },
      { action: 'note.deleted', key: 'key_1', note: 'note_1', ip: null, at: '2026-11-01T10:10:00.000Z', lastAt: '2026-11-01T10:10:00.000Z', count: 1, ua: null, format: undefined },
    ])
    expect(Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM audit_events'))!.n)).toBe(8)
    // the list says the same, newest first
    expect((await service.list('acct_a', { limit: 10, action: 'note.transcript_exported' })).items.map(e => e.count)).toEqual([1, 1, 1, 1, 2002])
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

const postgres = backEnds.find(b => b.name === 'postgres')!
describe.skipIf(postgres.skip)('two nodes on one PostgreSQL database', () => {
  // Fails on the old code (one row per read), and on a count that reads, then writes (planted: both
  // nodes find no row of the slot and both insert one, and the second insert is refused with a 500).
  test('two reads at once, one on each node, are one row with count 2, in every slot', async () => {
    const url = await freshPostgresUrl()
    const stores = [new PostgresStore(url, { max: 4 }), new PostgresStore(url, { max: 4 })]
    opened.push(...stores)
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const [one, two] = stores.map(store => createTestApp({ store, clock }))
    const token = await one!.key()
    const note = await one!.call('POST', '/v1/notes', { token, body: { title: 'shared', content: 'words' } })
    const read = (node: typeof one) => node!.call('GET', `/v1/notes/${note.body.id}/transcript`, { token }).then(r => r.status)
    const SLOTS = 30
    for (let slot = 0; slot < SLOTS; slot++) {
      // a new slot each time: each pair races to make the slot's row
      clock.advance(10 * 60_000)
      expect(await Promise.all([read(one), read(two)])).toEqual([200, 200])
    }
    const rows = await stores[0]!.all<{ count: number }>("SELECT count FROM audit_events WHERE action = 'note.transcript_exported' ORDER BY at")
    expect(rows.map(r => Number(r.count))).toEqual(Array.from({ length: SLOTS }, () => 2))
    const listed = (await two!.call('GET', '/v1/audit-events?action=note.transcript_exported', { token })).body.data
    expect(listed.length).toBe(SLOTS)
    expect(listed.every((e: any) => e.count === 2 && e.lastAt >= e.at)).toBe(true)
  })
})
