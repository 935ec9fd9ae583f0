import { describe, expect, test } from 'bun:test'
import { PostgresStore } from '../../src/db/store'
import type { Env } from '../../src/config'
import { createTestApp, fixedClock, type CallResult } from '../helpers/app'
import { backEnds, freshPostgresUrl } from '../helpers/backends'
import { field, sessionCookie } from '../helpers/web'
import { closedAfterAll } from '../helpers/closing'

/**
 * Two nodes on one PostgreSQL database: two complete apps, each with its own connection pool on the
 * same database URL, driven with real HTTP requests (app.handle). What one node counts, charges or
 * revokes, the other sees on its very next request.
 */

const pg = backEnds.find(b => b.name === 'postgres')!
const EMAIL = 'nodes@example.com'
const SUMMARY = { text: 'We decided to ship on Friday. Ada owns the release notes.' }

const opened = closedAfterAll()

/** Two apps (nodes) on one fresh database, at one fixed time. */
async function twoNodes(env: Env = {}) {
  const url = await freshPostgresUrl()
  const clock = fixedClock('2026-11-10T12:00:00.000Z')
  const node = () => {
    const store = new PostgresStore(url, { max: 4 })
    opened.push(store)
    return createTestApp({ store, clock, env })
  }
  return { a: node(), b: node(), clock }
}

describe.skipIf(pg.skip)('two nodes on one PostgreSQL database', () => {
  test('50 charges at once through both nodes against 10 charges\' worth of credits: exactly 10 succeed, and the ledger sums to the balance change', async () => {
    const { a, b } = await twoNodes({ NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' })
    const token = await a.key({ email: EMAIL })
    const account = await a.services.accounts.requireAccount(EMAIL)
    // createSummary costs 2: leave 20 credits, ten summaries' worth.
    await a.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 40, source: 'api_key' })
    const before = (await b.services.credits.balance(account.id)).totalRemaining
    expect(before).toBe(20)

    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? b : a).call('POST', '/v1/summaries', { token, body: SUMMARY })))
    const statuses = answers.map(r => r.status)
    expect(statuses.filter(s => s === 200)).toHaveLength(10)
    expect(statuses.filter(s => s === 402)).toHaveLength(40)
    for (const r of answers.filter(r => r.status === 402)) expect(r.body.error.code).toBe('insufficient_credits')
    // Each success says what was left after it: ten different balances, never below zero.
    expect(answers.filter(r => r.status === 200).map(r => Number(r.headers.get('x-credits-remaining'))).sort((x, y) => x - y)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18])

    const after = (await a.services.credits.balance(account.id)).totalRemaining
    expect(after).toBe(0)
    const ledger = await a.store.get<{ n: string; total: string }>("SELECT count(*) AS n, sum(credits) AS total FROM usage WHERE account_id = ? AND operation = 'createSummary'", [account.id])
    expect({ rows: Number(ledger!.n), credits: Number(ledger!.total) }).toEqual({ rows: 10, credits: before - after })
  }, 60_000)

  test('11 processing requests alternated over both nodes against a limit of 10: exactly one 429', async () => {
    const { a, b } = await twoNodes({ NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=10' })
    const token = await a.key({ email: EMAIL })
    const answers: CallResult[] = await Promise.all(Array.from({ length: 11 }, (_, i) => (i % 2 ? b : a).call('POST', '/v1/summaries', { token, body: SUMMARY })))
    const statuses = answers.map(r => r.status)
    expect(statuses.filter(s => s === 429)).toHaveLength(1)
    expect(statuses.filter(s => s === 200)).toHaveLength(10)
    // One window counted by both nodes: the ten admitted requests saw every remaining count once.
    expect(answers.filter(r => r.status === 200).map(r => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const refused = answers.find(r => r.status === 429)!
    expect(refused.body.error.code).toBe('rate_limited')
    expect(refused.headers.get('x-ratelimit-limit')).toBe('10')
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('retry-after')).toBe('60')

    // The next request, on either node, is refused too: the window is shared.
    expect((await b.call('POST', '/v1/summaries', { token, body: SUMMARY })).status).toBe(429)
  }, 60_000)

  test('a page node A keeps is never served after a change through node B: each list sees every change made before it', async () => {
    const { a, b } = await twoNodes()
    const token = await a.key()
    const titles = async (node: typeof a) => ((await node.call('GET', '/v1/notes?limit=50', { token })).body as { data: { title: string }[] }).data.map(n => n.title)
    expect(await titles(a)).toEqual([])
    expect(await titles(a)).toEqual([]) // kept now
    const first = (await b.call('POST', '/v1/notes', { token, body: { title: 'Made on B', content: 'Text.' } })).body as { id: string }
    expect(await titles(a)).toEqual(['Made on B'])
    expect(await titles(a)).toEqual(['Made on B'])
    expect((await b.call('PATCH', `/v1/notes/${first.id}`, { token, body: { title: 'Renamed on B' } })).status).toBe(200)
    expect(await titles(a)).toEqual(['Renamed on B'])
    expect((await b.call('DELETE', `/v1/notes/${first.id}`, { token })).status).toBe(204)
    expect(await titles(a)).toEqual([])
    // and the other way round, alternating nodes request by request
    for (let i = 1; i <= 5; i++) {
      const writer = i % 2 ? a : b
      const reader = i % 2 ? b : a
      await writer.call('POST', '/v1/notes', { token, body: { title: `Note ${i}`, content: 'Text.' } })
      expect((await titles(reader)).length).toBe(i)
      expect((await titles(writer)).length).toBe(i)
    }
  })

  test('a key revoked through node A is refused by node B within one second', async () => {
    const { a, b } = await twoNodes()
    const PASSWORD = 'correct horse battery staple'
    await a.services.web.setPassword(EMAIL, PASSWORD)
    const created = await a.services.accounts.createKey({ email: EMAIL })
    // Node B admits the key (and has read it, so a cache would now hold it).
    expect((await b.call('GET', '/v1/usage', { token: created.key })).status).toBe(200)
    expect((await b.call('GET', '/v1/usage', { token: created.key })).status).toBe(200)

    // Sign in on node A and revoke the key from its settings page.
    const session = await sessionCookie('http://localhost', request => a.app.handle(request), EMAIL, PASSWORD)
    // The session lives in the database: node B knows it too.
    const settings = await b.app.handle(new Request('http://localhost/settings', { headers: { cookie: session } }))
    expect(settings.status).toBe(200)
    const csrf = field(await settings.text(), 'csrf')!
    const revoked = await a.app.handle(new Request(`http://localhost/settings/keys/${created.info.id}/revoke`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie: session, origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    }))
    expect(revoked.status).toBe(303)

    // Each node trusts a verified key for at most half a second: refused everywhere within one second
    // (the bound), asked every 50 ms.
    const revokedAt = performance.now()
    let refused = await b.call('GET', '/v1/usage', { token: created.key })
    while (refused.status === 200 && performance.now() - revokedAt < 1000) {
      await Bun.sleep(50)
      refused = await b.call('GET', '/v1/usage', { token: created.key })
    }
    console.log(`revoked through node A: refused by node B after ${(performance.now() - revokedAt).toFixed(0)} ms`)
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe('invalid_token')
    expect((await a.call('GET', '/v1/usage', { token: created.key })).status).toBe(401)
  }, 60_000)
})
