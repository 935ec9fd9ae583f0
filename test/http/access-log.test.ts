/**
 * NOTESVC_ACCESS_LOG (src/http/access-log.ts): one JSON line for every request, whatever route answers
 * it and however it ends (method, route template, status, duration, request id, account and
 * credential id), and never a secret: not the key, not the path's ids, not the query, not the body.
 */
import { describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/log'
import { createTestApp } from '../helpers/app'

function loggedApp(env: Record<string, string> = { NOTESVC_ACCESS_LOG: '1' }) {
  const lines: string[] = []
  const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', ...env }, log: createLogger('info', l => lines.push(l)) })
  const requests = () => lines.map(l => JSON.parse(l) as Record<string, unknown>).filter(l => l.msg === 'request')
  return { t, lines, requests }
}

describe('the access log', () => {
  test('one line per request, on every route and every outcome, with the route template and the answer’s status', async () => {
    const { t, lines, requests } = loggedApp()
    const key = await t.key({ email: 'logged@example.com' })
    const account = await t.services.accounts.ensureAccount('logged@example.com')
    const calls: { method: string; path: string; body?: unknown; token?: string; expect: [string, number] }[] = [
      { method: 'GET', path: '/v1/health', expect: ['/v1/health', 200] },
      { method: 'POST', path: '/v1/notes', token: key, body: { title: 'secret title', content: 'secret content' }, expect: ['/v1/notes', 201] },
      { method: 'GET', path: '/v1/notes?limit=5&q=secret', token: key, expect: ['/v1/notes', 200] },
      { method: 'GET', path: '/v1/notes/not_a_real_id', token: key, expect: ['/v1/notes/:id', 404] },
      { method: 'POST', path: '/v1/folders', token: key, body: { name: '' }, expect: ['/v1/folders', 400] },
      { method: 'GET', path: '/v1/notes', token: 'svc_live_wrongwrongwrongwrongwrongwrong', expect: ['/v1/notes', 401] },
      { method: 'GET', path: '/v1/nowhere', expect: ['*', 404] },
      { method: 'DELETE', path: '/v1/health', expect: ['*', 405] },
    ]
    const ids: string[] = []
    for (const c of calls) {
      const res = await t.call(c.method, c.path, { token: c.token, body: c.body })
      expect([c.path, res.status]).toEqual([c.path, c.expect[1]])
      ids.push(res.headers.get('x-request-id')!)
    }
    await Bun.sleep(20)
    const logged = requests()
    expect(logged.map(l => [l.method, l.route, l.status, l.requestId])).toEqual(calls.map((c, i) => [c.method, c.expect[0], c.expect[1], ids[i]]))
    // admitted requests name the account and the credential; the others name none
    expect(logged.map(l => l.accountId ?? null)).toEqual([null, account.id, account.id, account.id, account.id, null, null, null])
    for (const l of logged) expect(typeof l.durationMs === 'number' && l.durationMs >= 0).toBe(true)
    // no secret, no id from the path, no query, no body
    const all = lines.join('\n')
    for (const secret of [key, key.slice(-12), 'wrongwrong', 'not_a_real_id', 'q=secret', 'secret title', 'secret content', 'limit=5']) expect(all).not.toContain(secret)
  })

  test('off by default: no request line', async () => {
    const { t, requests } = loggedApp({})
    await t.call('GET', '/v1/health')
    await t.call('GET', '/v1/nowhere')
    await Bun.sleep(20)
    expect(requests()).toEqual([])
  })
})
