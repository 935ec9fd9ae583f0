import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { systemClock } from '../../../src/clock'
import type { Store } from '../../../src/db/store'
import { createIdGenerator } from '../../../src/ids'
import { silentLogger } from '../../../src/log'
import type { Library } from '../../../src/modules/library'
import { createWebhooksRepo } from '../../../src/modules/webhooks/repo'
import { createWebhooksService, type WebhooksDeps } from '../../../src/modules/webhooks/service'

/**
 * The sender loop against real receivers on loopback, on the real clock: a slot that frees takes the
 * next due event at once (no batch to wait for), and a claim skips the events of an endpoint that
 * already has a delivery under way, so a receiver that does not answer delays only its own events.
 * Each test asserts the order of events (what the database held when a receiver was reached), not
 * how long something took.
 */

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(60_000)

const DEV = { NOTESVC_ALLOW_PRIVATE_URLS: '1' }

interface Receiver {
  url: string
  /** requests received */
  got: number
  /** resolves when the receiver has received `n` requests */
  received(n: number): Promise<void>
}

const servers: { stop(): void }[] = []
afterEach(() => { for (const s of servers.splice(0)) s.stop() })

/**
 * A receiver on loopback. `hang`: it answers nothing until the test ends (the sender's timeout ends
 * each attempt); otherwise `answers` in turn (then 200). `onRequest` runs before the answer, when the
 * request has arrived.
 */
function receiver(o: { hang?: boolean; answers?: number[]; onRequest?: () => Promise<void> | void } = {}): Receiver {
  let got = 0
  const waiting: { n: number; resolve: () => void }[] = []
  const held: (() => void)[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0, // a held request is not cut by the server
    async fetch(req) {
      await req.text()
      got++
      await o.onRequest?.()
      for (const w of waiting.filter(w => got >= w.n)) w.resolve()
      if (o.hang) await new Promise<void>(resolve => held.push(resolve))
      return new Response('ok', { status: o.answers?.[got - 1] ?? 200 })
    },
  })
  servers.push({ stop: () => { for (const release of held.splice(0)) release(); server.stop(true) } })
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    get got() { return got },
    received: n => (got >= n ? Promise.resolve() : new Promise<void>(resolve => waiting.push({ n, resolve }))),
  }
}

const count = async (store: Store, sql: string, params: string[] = []) => Number((await store.get<{ n: number | string }>(sql, params))!.n)

for (const b of backEnds) describe.skipIf(b.skip)(`the webhook sender on ${b.name}`, () => {
  // senders stop (their attempts under way end) before the stores close: hooks run in this order
  const senders: { stop(): Promise<void> }[] = []
  afterEach(async () => { for (const s of senders.splice(0)) await s.stop() })
  const open = closingAfterEach(b)

  /** Two accounts' libraries on one store, and a sender over it on the real clock with `deps`. */
  async function setup(deps: Partial<WebhooksDeps> = {}) {
    const store = await open()
    const t = createTestApp({ store, env: DEV })
    const a = (await t.services.accounts.createKey({ email: 'a@example.com', sandbox: true })).account
    const b_ = (await t.services.accounts.createKey({ email: 'b@example.com' })).account
    const sender = createWebhooksService({ repo: createWebhooksRepo(store), clock: systemClock, ids: createIdGenerator(), log: silentLogger, allowPrivateUrls: true, ...deps })
    senders.push(sender)
    const libA: Library = { accountId: a.id, sandbox: true }
    const libB: Library = { accountId: b_.id, sandbox: false }
    /** a note of `lib` finished: one event per endpoint of the library */
    let notes = 0
    const settled = async (lib: Library) => {
      await sender.noteSettled({ noteId: `note_${++notes}`, accountId: lib.accountId, sandbox: lib.sandbox, status: 'Done', errorCode: null })
      await Bun.sleep(2) // the next event is strictly younger (created_at has milliseconds)
    }
    const hook = async (lib: Library, r: Receiver) => (await sender.create(lib, { url: r.url, events: ['note.completed'] })).id
    return { store, sender, libA, libB, settled, hook }
  }

  test("24 receivers of one account that never answer do not hold up another account's delivery", async () => {
    // timeouts of 1 s: with a batch that waits for every attempt, B's event would come after three rounds of them
    const s = await setup({ timeoutMs: 1_000 })
    const hanging = Array.from({ length: 24 }, () => receiver({ hang: true }))
    for (const r of hanging) await s.hook(s.libA, r)
    await s.settled(s.libA) // 24 events, older than B's
    let seen: { aAttemptsEnded: number; aUnderWay: number } | null = null
    let bHook = ''
    const fast = receiver({
      onRequest: async () => {
        seen = {
          aAttemptsEnded: await count(s.store, 'SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id <> ?', [bHook]),
          aUnderWay: await count(s.store, `SELECT count(*) AS n FROM webhook_outbox WHERE status = 'running' AND webhook_id <> ?`, [bHook]),
        }
      },
    })
    bHook = await s.hook(s.libB, fast)
    await s.settled(s.libB)

    s.sender.start('sender-1')
    await fast.received(1)
    // B's delivery arrived before any attempt to A's receivers ended: none timed out yet, and A had
    // its share of the slots (8 per account) under way
    expect(seen!).toEqual({ aAttemptsEnded: 0, aUnderWay: 8 })
    const aReached = () => hanging.reduce((n, r) => n + r.got, 0)
    while (aReached() < 8) await Bun.sleep(10)
    expect(await count(s.store, `SELECT count(*) AS n FROM webhook_outbox WHERE status = 'running' AND webhook_id <> ?`, [bHook])).toBe(8)
    expect(aReached()).toBe(8)
  })

  test('an endpoint that does not answer, with 5 events due, has one delivery under way at a time; the queue moves on past it', async () => {
    const s = await setup({ timeoutMs: 300, retryDelaysMs: [600_000] })
    const order: string[] = []
    let slowHook = ''
    const underWayAtArrival: number[] = []
    const slow = receiver({
      hang: true,
      onRequest: async () => {
        order.push('slow')
        underWayAtArrival.push(await count(s.store, `SELECT count(*) AS n FROM webhook_outbox WHERE status = 'running' AND webhook_id = ?`, [slowHook]))
      },
    })
    slowHook = await s.hook(s.libA, slow)
    for (let i = 0; i < 5; i++) await s.settled(s.libA)
    const fast = receiver({ onRequest: () => { order.push('fast') } })
    const liveA: Library = { accountId: s.libA.accountId, sandbox: false }
    await s.hook(liveA, fast) // the same account (its live library): its event is the youngest
    await s.settled(liveA)

    s.sender.start('sender-1')
    await slow.received(5) // each after the one before timed out
    await fast.received(1)
    expect(underWayAtArrival).toEqual([1, 1, 1, 1, 1])
    // the fast endpoint's event, behind five of the slow one's, went out while the first still hung
    expect(order.indexOf('fast')).toBeLessThan(order.indexOf('slow', order.indexOf('slow') + 1))
    await s.sender.stop()
    expect((await s.sender.outboxOf(slowHook)).map(o => [o.status, o.attempts])).toEqual(Array(5).fill(['queued', 1]))
  })

  test('four senders at once never have two deliveries under way to one endpoint', async () => {
    const s = await setup({ timeoutMs: 300, retryDelaysMs: [600_000] })
    const others = [2, 3, 4].map(() => createWebhooksService({ repo: createWebhooksRepo(s.store), clock: systemClock, ids: createIdGenerator(), log: silentLogger, allowPrivateUrls: true, timeoutMs: 300, retryDelaysMs: [600_000] }))
    senders.push(...others)
    const underWayAtArrival: number[] = []
    const endpoints: { r: Receiver; id: string }[] = []
    for (let i = 0; i < 8; i++) {
      const e = { r: null as unknown as Receiver, id: '' }
      e.r = receiver({ hang: true, onRequest: async () => { underWayAtArrival.push(await count(s.store, `SELECT count(*) AS n FROM webhook_outbox WHERE status = 'running' AND webhook_id = ?`, [e.id])) } })
      e.id = await s.hook(s.libA, e.r)
      endpoints.push(e)
    }
    for (let i = 0; i < 3; i++) await s.settled(s.libA)

    s.sender.start('sender-1')
    others.forEach((o, i) => o.start(`sender-${i + 2}`))
    await Promise.all(endpoints.map(e => e.r.received(3)))
    expect(underWayAtArrival).toEqual(Array(24).fill(1))
  })

  test('a claim made while another is still being committed does not take a second event of the same endpoint', async () => {
    const s = await setup()
    const id = await s.hook(s.libA, receiver({ hang: true }))
    for (let i = 0; i < 2; i++) await s.settled(s.libA)
    const { outbox } = createWebhooksRepo(s.store)
    const now = Date.now()
    const claim = (owner: string) => outbox.claim(owner, new Date(now).toISOString(), new Date(now + 60_000).toISOString())
    // the first claim's transaction stays open while the second claim is made, in a transaction of its own
    let claimed = () => {}
    const firstClaimed = new Promise<void>(resolve => { claimed = resolve })
    const second = (async () => {
      await firstClaimed
      return claim('sender-2')
    })()
    const first = await s.store.transaction(async () => {
      const rows = await claim('sender-1')
      claimed()
      await Bun.sleep(300)
      return rows
    })
    expect(first).toHaveLength(1)
    expect(await second).toEqual([])
    expect((await s.sender.outboxOf(id)).map(o => o.status).sort()).toEqual(['queued', 'running'])
  })

  test('a failed delivery is tried again at its scheduled delay, while another endpoint still hangs', async () => {
    // the sender looks by itself only every minute here: the retry is woken by its own due time
    const s = await setup({ timeoutMs: 3_000, retryDelaysMs: [300], pollMs: 60_000 })
    const slow = receiver({ hang: true })
    const slowHook = await s.hook(s.libA, slow)
    await s.settled(s.libA)
    let slowAtRetry: unknown = null
    const failing = receiver({
      answers: [500, 200],
      onRequest: async () => {
        if (failing.got === 2) slowAtRetry = { outbox: (await s.sender.outboxOf(slowHook)).map(o => [o.status, o.attempts]), attempts: (await s.sender.deliveries(s.libA, slowHook)).data.length }
      },
    })
    const failingHook = await s.hook(s.libB, failing)
    await s.settled(s.libB)

    s.sender.start('sender-1')
    await failing.received(2)
    // the slow endpoint's first attempt was still under way (it times out after 3 s)
    expect(slowAtRetry!).toEqual({ outbox: [['running', 1]], attempts: 0 })
    await s.sender.stop()
    const log = (await s.sender.deliveries(s.libB, failingHook)).data.reverse()
    expect(log.map(d => [d.attempt, d.status, d.responseCode])).toEqual([[1, 'failed', 500], [2, 'delivered', 200]])
    // not before its time: the second attempt began at least the delay after the first began
    expect(Date.parse(log[1]!.attemptedAt) - Date.parse(log[0]!.attemptedAt)).toBeGreaterThanOrEqual(300)
  })
})
