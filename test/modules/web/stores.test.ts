import { identityServices } from '../../helpers/identity'
import { describe, expect, test } from 'bun:test'
import { createWebService, MAX_FAILURES_PER_EMAIL } from '../../../src/modules/web/service'
import { SESSION_COOKIE } from '../../../src/modules/web/sessions'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'

/**
 * Passwords, sessions and sign-in failures on each store: the web service over a fresh store, as
 * createServices builds it (the accounts and keys it signs in to: test/modules/accounts/stores.test.ts).
 */

const opened = closedAfterAll()

for (const b of backEnds) describe.skipIf(b.skip)(`sessions and sign-in on ${b.name}`, () => {
  async function identity() {
    const store = await b.open()
    opened.push(store)
    const { clock, accounts } = identityServices(store)
    const web = createWebService({ store, clock, accounts, secureCookies: false })
    return { clock, web }
  }

  test('password sign-in: a session the next request is known by, ended by sign-out; failures are limited per email', async () => {
    const { clock, web } = await identity()
    expect(await web.setPassword('erin@example.com', 'a long enough password')).toMatchObject({ email: 'erin@example.com', created: true })
    const ok = await web.signIn('Erin@example.com', 'a long enough password', '192.0.2.7')
    if (!ok.ok) throw new Error(`sign-in refused: ${JSON.stringify(ok)}`)
    const cookie = ok.setCookie.split(';')[0]!
    expect(cookie.startsWith(`${SESSION_COOKIE}=`)).toBe(true)
    const request = new Request('http://localhost/settings', { headers: { cookie } })
    expect(await web.sessions.userOf(request)).toMatchObject({ accountId: ok.accountId, email: 'erin@example.com' })
    expect(await web.sessions.destroy(request)).toContain('Max-Age=0')
    expect(await web.sessions.userOf(request)).toBeNull()

    for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) expect(await web.signIn('erin@example.com', `wrong ${i}`, `198.51.100.${i}`)).toEqual({ ok: false, reason: 'invalid' })
    clock.advance(60_000)
    expect(await web.signIn('erin@example.com', 'a long enough password', '192.0.2.7')).toEqual({ ok: false, reason: 'limited', retryAfterSeconds: 14 * 60 })
  })
})
