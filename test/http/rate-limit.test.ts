import { describe, expect, test } from 'bun:test'
import { fixedClock } from '../../src/clock'
import { PostgresStore } from '../../src/db/store'
import { MemoryRateLimiter, SharedRateLimiter } from '../../src/http/rate-limit'
import { rateLimiterFor } from '../../src/services'
import { backEnds, freshPostgresUrl } from '../helpers/backends'
import { closedAfterAll } from '../helpers/closing'

const LIMITS = { read: 3, write: 2, processing: 1 }
const opened = closedAfterAll()

for (const b of backEnds) describe.skipIf(b.skip)(`rate limits on ${b.name}`, () => {
  async function limiter(at = '2026-04-01T09:00:00.000Z') {
    const store = await b.open()
    opened.push(store)
    const clock = fixedClock(at)
    return { clock, limiter: rateLimiterFor(store, LIMITS, clock), store }
  }

  test(`counts in ${b.name === 'sqlite' ? 'memory (one serving process per data folder)' : 'the database (shared by the nodes)'}`, async () => {
    const { limiter: l } = await limiter()
    expect(l).toBeInstanceOf(b.name === 'sqlite' ? MemoryRateLimiter : SharedRateLimiter)
  })

  test('a fixed 60-second window from the first request: limit, remaining, reset, then refusals until it ends', async () => {
    const { clock, limiter: l } = await limiter()
    const seen = []
    for (let i = 0; i < 5; i++) {
      seen.push(await l.hit('c:key_a', 'read'))
      clock.advance(10_000)
    }
    expect(seen).toEqual([
      { limit: 3, remaining: 2, resetSeconds: 60, allowed: true },
      { limit: 3, remaining: 1, resetSeconds: 50, allowed: true },
      { limit: 3, remaining: 0, resetSeconds: 40, allowed: true },
      { limit: 3, remaining: 0, resetSeconds: 30, allowed: false },
      { limit: 3, remaining: 0, resetSeconds: 20, allowed: false },
    ])
    clock.advance(10_000) // 60 s after the first request: a new window
    expect(await l.hit('c:key_a', 'read')).toEqual({ limit: 3, remaining: 2, resetSeconds: 60, allowed: true })
  })

  test('keys and classes are counted apart', async () => {
    const { limiter: l } = await limiter()
    expect((await l.hit('c:key_a', 'processing')).allowed).toBe(true)
    expect((await l.hit('c:key_a', 'processing')).allowed).toBe(false)
    expect((await l.hit('c:key_b', 'processing')).allowed).toBe(true)
    expect(await l.hit('c:key_a', 'write')).toMatchObject({ limit: 2, remaining: 1, allowed: true })
  })

  test('requests at once: exactly the limit is allowed', async () => {
    const { limiter: l } = await limiter()
    const decisions = await Promise.all(Array.from({ length: 12 }, () => l.hit('ip:192.0.2.1', 'read')))
    expect(decisions.filter(d => d.allowed)).toHaveLength(3)
    expect(decisions.filter(d => d.allowed).map(d => d.remaining).sort()).toEqual([0, 1, 2])
  })
})

describe.skipIf(backEnds[1]!.skip)('rate limits of two nodes on one PostgreSQL database', () => {
  test('two limiters (two nodes, two connection pools) share every window; windows that are over are deleted', async () => {
    const url = await freshPostgresUrl()
    const a = new PostgresStore(url, { max: 4 })
    const b = new PostgresStore(url, { max: 4 })
    opened.push(a, b)
    const clock = fixedClock('2026-04-01T09:00:00.000Z')
    const nodes = [rateLimiterFor(a, LIMITS, clock), rateLimiterFor(b, LIMITS, clock)]
    const decisions = await Promise.all(Array.from({ length: 11 }, (_, i) => nodes[i % 2]!.hit('c:key_shared', 'read')))
    expect(decisions.filter(d => d.allowed)).toHaveLength(3)
    expect(Number((await a.get<{ n: string }>('SELECT count(*) AS n FROM rate_windows'))!.n)).toBe(1)

    // A window over for more than a minute is deleted by the next node that sweeps (at most once a window).
    clock.advance(61_000)
    await nodes[1]!.hit('c:key_other', 'read')
    expect((await a.all<{ key: string }>('SELECT key FROM rate_windows')).map(r => r.key)).toEqual(['c:key_other'])
    expect(await nodes[0]!.hit('c:key_shared', 'read')).toMatchObject({ remaining: 2, allowed: true })
  })
})
