/**
 * Share pages' openings written in batches (src/modules/sharing/openings.ts), on both back ends:
 * nothing per opening until the batch is written, then each link's count and last time and one
 * `share.opened` audit event per opening, in one go; a batch full before its time is written at once.
 */
import { describe, expect, test } from 'bun:test'
import { createTestApp, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { createIdGenerator } from '../../../src/ids'
import { createAuditRepo } from '../../../src/modules/audit/repo'
import { createAuditService } from '../../../src/modules/audit/service'
import { createSharesRepo } from '../../../src/modules/sharing/repo'
import { createOpeningsLog } from '../../../src/modules/sharing/openings'

for (const b of backEnds) describe.skipIf(b.skip)(`share openings on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup(maxBatch = 500) {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const t = createTestApp({ clock, store: await open() })
    const key = await t.key()
    const note = (await t.call('POST', '/v1/notes', { token: key, body: { title: 't', content: 'words' } })).body
    const shares = [] as { id: string }[]
    for (let i = 0; i < 2; i++) shares.push((await t.call('POST', `/v1/notes/${note.id}/shares`, { token: key, body: {} })).body)
    const log = createOpeningsLog({ repo: createSharesRepo(t.store), audit: createAuditService({ repo: createAuditRepo(t.store), clock, ids: createIdGenerator() }), store: t.store, flushMs: 60_000, maxBatch })
    const opening = (shareId: string, at: string) => ({ shareId, noteId: note.id, accountId: accountOf, sandbox: false, at, origin: { ip: '10.0.0.1', userAgent: 'ua' } })
    const accountOf = (await t.store.get<{ account_id: string }>('SELECT account_id FROM note_shares WHERE id = ?', [shares[0]!.id]))!.account_id
    const state = async () => ({
      shares: await t.store.all<{ id: string; open_count: number | string; last_opened_at: string | null }>('SELECT id, open_count, last_opened_at FROM note_shares ORDER BY id'),
      events: Number((await t.store.get<{ n: number | string }>("SELECT count(*) AS n FROM audit_events WHERE action = 'share.opened'"))!.n),
    })
    return { t, log, shares, opening, state }
  }

  test('openings wait, then one write adds each link\'s count, its last time and one event each', async () => {
    const { log, shares, opening, state } = await setup()
    const [a, b2] = [shares[0]!.id, shares[1]!.id]
    await log.record(opening(a, '2026-11-01T10:00:01.000Z'))
    await log.record(opening(a, '2026-11-01T10:00:03.000Z'))
    await log.record(opening(b2, '2026-11-01T10:00:02.000Z'))
    await log.record(opening(a, '2026-11-01T10:00:02.000Z'))
    const before = await state()
    expect(before.events).toBe(0)
    expect(before.shares.map(s => Number(s.open_count))).toEqual([0, 0])
    await log.flush()
    const after = await state()
    expect(after.events).toBe(4)
    const byId = new Map(after.shares.map(s => [s.id, { n: Number(s.open_count), last: s.last_opened_at }]))
    expect(byId.get(a)).toEqual({ n: 3, last: '2026-11-01T10:00:03.000Z' })
    expect(byId.get(b2)).toEqual({ n: 1, last: '2026-11-01T10:00:02.000Z' })
    // a later batch with an earlier time never moves the last opening back
    await log.record(opening(a, '2026-11-01T09:00:00.000Z'))
    await log.flush()
    expect(new Map((await state()).shares.map(s => [s.id, s.last_opened_at])).get(a)).toBe('2026-11-01T10:00:03.000Z')
  })

  test('a full batch is written without waiting for its time', async () => {
    const { log, shares, opening, state } = await setup(3)
    for (let i = 0; i < 3; i++) await log.record(opening(shares[0]!.id, `2026-11-01T10:00:0${i}.000Z`))
    // the third opening started the write (its time is a minute away): wait for it without flushing
    let events = 0
    for (let tries = 0; tries < 300 && events < 3; tries++) {
      await Bun.sleep(10)
      events = (await state()).events
    }
    expect(events).toBe(3)
  })

  test('a batch that could not be written does not stop later ones, nor the owner\'s list of links', async () => {
    const { t, shares, opening, state } = await setup()
    const repo = createSharesRepo(t.store)
    let failNext = true
    const flaky = { ...repo, countOpened: async (...a: Parameters<typeof repo.countOpened>) => {
      if (failNext) { failNext = false; throw new Error('database is locked') }
      return repo.countOpened(...a)
    } }
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const log = createOpeningsLog({ repo: flaky, audit: createAuditService({ repo: createAuditRepo(t.store), clock, ids: createIdGenerator() }), store: t.store, flushMs: 60_000 })
    await log.record(opening(shares[0]!.id, '2026-11-01T10:00:01.000Z'))
    expect(await log.flush().then(() => 'written', () => 'failed')).toBe('failed')
    await log.record(opening(shares[0]!.id, '2026-11-01T10:00:02.000Z'))
    expect(await log.flush().then(() => 'written', () => 'failed')).toBe('written')
    const after = await state()
    expect(after.events).toBe(1)
    expect(after.shares.map(s => Number(s.open_count)).sort()).toEqual([0, 1])
  })
})
