import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createClient, RateLimitedError, ServiceUnavailableError } from '@notesvc/client'

/**
 * Retries seen through the waits the client asks of its `sleep`: a loopback server answers from a
 * script of refusals, then the usage body; nothing in these tests waits.
 */
const USAGE = { balance: { plan: 'free', grantTotal: 60, grantRemaining: 60, purchasedRemaining: 0, totalRemaining: 60 }, spentThisPeriod: 0, periodEnds: '2026-12-01T00:00:00.000Z', recent: [], costs: {} }

type Scripted = { status: number; headers?: Record<string, string> }
let script: Scripted[] = []
let requests = 0

const envelope = (status: number, code: string) => ({ error: { type: 'invalid_request_error', code, message: `scripted ${status}`, doc_url: `http://localhost/docs/errors#${code}`, request_id: `req_${requests}` } })
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch() {
    requests++
    const next = script.shift()
    if (!next) return Response.json(USAGE, { headers: { 'x-request-id': `req_${requests}` } })
    const code = next.status === 429 ? 'rate_limited' : 'service_unavailable'
    return Response.json(envelope(next.status, code), { status: next.status, headers: { 'x-request-id': `req_${requests}`, ...next.headers } })
  },
})
const baseUrl = `http://127.0.0.1:${server.port}`
afterAll(() => server.stop(true))
beforeEach(() => {
  requests = 0
  script = []
})

function sleeper() {
  const asked: number[] = []
  return { asked, sleep: async (ms: number) => void asked.push(ms) }
}

describe('retries on 429 and 503', () => {
  test('429 with Retry-After: 2, then 200: the client waits 2000 ms once and returns the body', async () => {
    script = [{ status: 429, headers: { 'retry-after': '2' } }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep })
    expect(await client.getUsage()).toEqual(USAGE as never)
    expect(asked).toEqual([2000])
    expect(requests).toBe(2)
  })

  test('with retry: false the 429 is a RateLimitedError with retryAfter 2 and its request id', async () => {
    script = [{ status: 429, headers: { 'retry-after': '2' } }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep, retry: false })
    const error = await client.getUsage().catch(e => e)
    expect(error).toBeInstanceOf(RateLimitedError)
    expect(error).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 2, requestId: 'req_1' })
    expect(asked).toEqual([])
    expect(requests).toBe(1)
  })

  test('503 with Retry-After: 1 twice, then 200: two waits of 1000 ms', async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' } }, { status: 503, headers: { 'retry-after': '1' } }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep })
    expect(await client.getUsage()).toEqual(USAGE as never)
    expect(asked).toEqual([1000, 1000])
  })

  test('without Retry-After the waits back off exponentially (with jitter), and after maxRetries the error is thrown', async () => {
    script = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep, retry: { maxRetries: 3, baseDelayMs: 100 } })
    const error = await client.getUsage().catch(e => e)
    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error.retryAfter).toBeNull()
    expect(requests).toBe(4)
    // each wait is between half and all of 100, 200, 400 ms
    expect(asked.length).toBe(3)
    expect(asked.map((ms, i) => ms >= 50 * 2 ** i && ms <= 100 * 2 ** i)).toEqual([true, true, true])
  })

  test('a Retry-After longer than maxDelayMs is not waited for: the error is thrown with it', async () => {
    script = [{ status: 429, headers: { 'retry-after': '120' } }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep, retry: { maxDelayMs: 30_000 } })
    const error = await client.getUsage().catch(e => e)
    expect(error).toMatchObject({ code: 'rate_limited', retryAfter: 120 })
    expect(asked).toEqual([])
  })

  test('statuses outside `on` are not retried', async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' } }]
    const { asked, sleep } = sleeper()
    const client = createClient({ baseUrl, apiKey: 'svc_test_x', sleep, retry: { on: [429] } })
    expect(await client.getUsage().catch(e => e)).toBeInstanceOf(ServiceUnavailableError)
    expect(asked).toEqual([])
  })
})
