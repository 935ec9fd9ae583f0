import { describe, expect, spyOn, test } from 'bun:test'
import { fixedClock } from '../../helpers/app'
import { createWebTestApp, signedIn, webAppWithPassword, type WebTestApp } from '../../helpers/web'
import { ROOT } from '../../helpers/process'
import { esc } from '../../../src/modules/web/pages'

const EMAIL = 'ada@example.com'
/** The sign-in limits as docs/security.md states them: failures per email and per client address in 15 minutes. */
const MAX_FAILURES_PER_EMAIL = 5
const MAX_FAILURES_PER_CLIENT = 20
const WINDOW_SECONDS = 15 * 60
const PASSWORD = 'correct horse battery staple'

const setup = (opts: Parameters<typeof createWebTestApp>[0] = {}) => webAppWithPassword(EMAIL, PASSWORD, opts)

/** Signed in, on the settings page, which answers 200. */
async function onSettings(t: WebTestApp) {
  const signed = await signedIn(t, EMAIL, PASSWORD)
  expect(signed.page.status).toBe(200)
  return signed
}

describe('passwords', () => {
  test('the stored hash is argon2id, never the password', async () => {
    const t = await setup()
    const row = t.db.query<{ password_hash: string }, [string]>('SELECT password_hash FROM accounts WHERE email = ?').get(EMAIL)!
    expect(row.password_hash.startsWith('$argon2id$')).toBe(true)
    expect(row.password_hash).not.toContain(PASSWORD)
    expect(await Bun.password.verify(PASSWORD, row.password_hash)).toBe(true)
    const dump = JSON.stringify(t.db.query('SELECT * FROM accounts').all())
    expect(dump).not.toContain(PASSWORD)
  })

  test('setPassword creates the account when missing and refuses short passwords', async () => {
    const t = createWebTestApp()
    const r = await t.web().setPassword('new@example.com', 'long enough pw')
    expect(r.created).toBe(true)
    expect((await t.web().setPassword('new@example.com', 'another long one')).created).toBe(false)
    await expect(t.web().setPassword('new@example.com', 'short')).rejects.toThrow(/at least 8/)
  })
})

describe('sign-in', () => {
  test('success: a session cookie and a 303 to next', async () => {
    const t = await setup()
    const b = t.browser()
    const r = await b.signIn(EMAIL, PASSWORD, '/oauth/authorize?client_id=x&scope=notes%3Aread')
    expect(r.status).toBe(303)
    expect(r.location).toBe('/oauth/authorize?client_id=x&scope=notes%3Aread')
    expect(b.jar.has('notesvc_session')).toBe(true)
    const settings = await b.get('/settings')
    expect(settings.status).toBe(200)
    expect(settings.text).toContain(EMAIL)
  })

  test('emails are matched without regard to case', async () => {
    const t = await setup()
    expect((await t.browser().signIn('ADA@Example.com', PASSWORD)).status).toBe(303)
  })

  test('failure: the form again with one generic message for a wrong password and an unknown email', async () => {
    const t = await setup()
    const wrong = await t.browser().signIn(EMAIL, 'not the password')
    const unknown = await t.browser().signIn('nobody@example.com', PASSWORD)
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401)
      expect(r.text).toContain('The email or password is not right.')
      expect(r.cookies.some(c => c.startsWith('notesvc_session='))).toBe(false)
    }
  })

  test('timing: an unknown email costs an argon2id verification too', async () => {
    const t = await setup()
    // The same work whether or not the email exists: one argon2id verification with the same cost
    // parameters. (How long that takes is printed by bench/signin-timing.ts, not asserted here.)
    const verify = spyOn(Bun.password, 'verify')
    try {
      expect(await t.web().signIn(EMAIL, 'wrong password', 'addr-known')).toEqual({ ok: false, reason: 'invalid' })
      expect(await t.web().signIn('nobody@example.com', 'wrong password', 'addr-unknown')).toEqual({ ok: false, reason: 'invalid' })
      expect(verify).toHaveBeenCalledTimes(2)
      const [known, unknown] = verify.mock.calls.map(c => String(c[1]))
      // `$argon2id$v=19$m=…,t=…,p=…$salt$hash`: algorithm, version and costs are the first three fields
      const costs = (hash: string) => hash.split('$').slice(1, 4).join('$')
      expect(costs(known!)).toStartWith('argon2id$')
      expect(costs(unknown!)).toBe(costs(known!))
      expect(unknown).not.toBe(known)
    } finally {
      verify.mockRestore()
    }
  })

  test('cookie flags: HttpOnly, SameSite=Lax, Path=/, no Secure on http', async () => {
    const t = await setup()
    const r = await t.browser().signIn(EMAIL, PASSWORD)
    const c = r.cookies.find(c => c.startsWith('notesvc_session='))!
    expect(c).toContain('HttpOnly')
    expect(c).toContain('SameSite=Lax')
    expect(c).toContain('Path=/;')
    expect(c).not.toContain('Secure')
  })

  test('cookie flags: Secure when NOTESVC_PUBLIC_URL is https', async () => {
    const t = await setup({ env: { NOTESVC_PUBLIC_URL: 'https://notes.example.com' } })
    const b = t.browser()
    const page = await b.get('/signin')
    expect(page.cookies[0]).toContain('Secure')
    const r = await b.signIn(EMAIL, PASSWORD)
    const c = r.cookies.find(c => c.startsWith('notesvc_session='))!
    expect(c).toMatch(/HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+; Secure/)
  })

  test('the sign-in form is CSRF-checked (pre-session double submit)', async () => {
    const t = await setup()
    const b = t.browser()
    await b.get('/signin')
    const r = await b.post('/signin', { csrf: 'forged', email: EMAIL, password: PASSWORD })
    expect(r.status).toBe(403)
    expect(b.jar.has('notesvc_session')).toBe(false)
    const noCookie = await t.browser().post('/signin', { csrf: 'x', email: EMAIL, password: PASSWORD })
    expect(noCookie.status).toBe(403)
  })
})

// next= and open redirects: signin-next.test.ts

describe('brute-force limits', () => {
  test(`${MAX_FAILURES_PER_EMAIL} failures per email in 15 minutes, then 429 with the retry time, even for the right password`, async () => {
    const clock = fixedClock('2026-03-10T10:00:00Z')
    const t = await setup({ clock })
    const b = t.browser()
    for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
      expect((await b.signIn(EMAIL, `wrong ${i}`)).status).toBe(401)
      clock.advance(60_000)
    }
    const limited = await b.signIn(EMAIL, PASSWORD)
    expect(limited.status).toBe(429)
    expect(limited.text).toContain('Too many failed sign-ins. Try again in 10 minutes.')
    expect(limited.headers.get('retry-after')).toBe(String(WINDOW_SECONDS - 5 * 60))
    expect(t.db.query<{ n: number }, []>("SELECT count(*) AS n FROM sign_in_failures WHERE key LIKE 'email:%'").get()!.n).toBe(MAX_FAILURES_PER_EMAIL)
    // The email is not stored in clear.
    expect(JSON.stringify(t.db.query('SELECT * FROM sign_in_failures').all())).not.toContain('ada')
    // Another email from the same address is still allowed.
    await t.web().setPassword('bob@example.com', 'bobs long password')
    expect((await t.browser().signIn('bob@example.com', 'bobs long password')).status).toBe(303)
    // After the oldest failure leaves the window, sign-in works again.
    clock.advance(10 * 60_000 - 1000)
    expect((await b.signIn(EMAIL, PASSWORD)).status).toBe(429)
    clock.advance(1000)
    expect((await b.signIn(EMAIL, PASSWORD)).status).toBe(303)
  })

  test(`${MAX_FAILURES_PER_CLIENT} failures per client address, whatever the emails`, async () => {
    const clock = fixedClock('2026-03-10T10:00:00Z')
    const t = await setup({ clock })
    for (let i = 0; i < MAX_FAILURES_PER_CLIENT; i++) {
      expect((await t.browser().signIn(`guess${i % 5}-${i}@example.com`, 'wrong')).status).toBe(401)
    }
    const r = await t.browser().signIn(EMAIL, PASSWORD)
    expect(r.status).toBe(429)
    // all the failures happened at the same instant: the first leaves the window after its full length
    expect(r.headers.get('retry-after')).toBe(String(WINDOW_SECONDS))
  })
})

describe('brute-force attempts in the audit log', () => {
  test('60 wrong posts, 20 s apart: every wrong password recorded, one rate_limited event per block, not one per refused post', async () => {
    const clock = fixedClock('2026-03-10T10:00:00Z')
    const t = await setup({ clock })
    const b = t.browser()
    const statuses: number[] = []
    for (let i = 0; i < 60; i++) {
      statuses.push((await b.signIn(EMAIL, `wrong ${i}`)).status)
      clock.advance(20_000)
    }
    // 0–80 s: 5 wrong; then refused until the first failure leaves the 15-minute window (900 s), when
    // the window lets 5 more through (900–980 s) and the email is blocked again (1000–1180 s)
    const count = (n: number) => statuses.filter(s => s === n).length
    expect({ 401: count(401), 429: count(429) }).toEqual({ 401: 10, 429: 50 })
    const reasons = t.db.query<{ details: string; account_id: string | null }, []>("SELECT details, account_id FROM audit_events WHERE action = 'signin.failed' ORDER BY at, id").all()
    // one rate_limited event for each of the two blocks (recording each refused post, the bug, gives 50)
    expect(reasons.map(r => JSON.parse(r.details).reason)).toEqual([
      ...Array(5).fill('wrong_password'), 'rate_limited',
      ...Array(5).fill('wrong_password'), 'rate_limited',
    ])
    // all under the account the email names, which its owner reads on the settings page
    expect(new Set(reasons.map(r => r.account_id)).size).toBe(1)
    expect(reasons[0]!.account_id).toMatch(/^acct_/)
  })
})

describe('sign-out', () => {
  test('POST /signout with the CSRF token ends the session', async () => {
    const t = await setup()
    const { b, csrf } = await onSettings(t)
    const refused = await b.post('/signout', { csrf: 'wrong' })
    expect(refused.status).toBe(403)
    expect((await b.get('/settings')).status).toBe(200)
    const r = await b.post('/signout', { csrf })
    expect(r.status).toBe(303)
    expect(r.location).toBe('/signin')
    expect(r.cookies[0]).toMatch(/^notesvc_session=; .*Max-Age=0/)
    expect((await b.get('/settings')).status).toBe(303)
    expect(t.db.query<{ n: number }, []>('SELECT count(*) AS n FROM sessions').get()!.n).toBe(0)
  })

  test('the session id is stored only as a hash', async () => {
    const t = await setup()
    const { b } = await onSettings(t)
    const value = b.jar.get('notesvc_session')!
    const rows = t.db.query<{ id_hash: string }, []>('SELECT id_hash FROM sessions').all()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.id_hash).not.toBe(value)
    expect(rows[0]!.id_hash).toBe(Bun.SHA256.hash(value, 'hex') as string)
  })
})

describe('settings', () => {
  test('requires sign-in: redirect to /signin?next=/settings', async () => {
    const t = await setup()
    const r = await t.browser().get('/settings')
    expect(r.status).toBe(303)
    expect(r.location).toBe('/signin?next=%2Fsettings')
    const post = await t.browser().post('/settings/keys', { csrf: 'x', library: 'live', scopes: 'notes:read' })
    expect(post.status).toBe(303)
    expect(post.location).toBe('/signin?next=%2Fsettings')
  })

  test('security headers on pages', async () => {
    const t = await setup()
    const { page } = await onSettings(t)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('cache-control')).toBe('no-store')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self'")
  })

  test('shows the balance and recent usage', async () => {
    const t = await setup()
    await t.services.accounts.addPurchasedCredits(EMAIL, 7)
    const account = await t.services.accounts.requireAccount(EMAIL)
    await t.services.credits.charge({ accountId: account.id, operation: 'createSummary', credits: 2, source: 'api_key' })
    const { page } = await onSettings(t)
    expect(page.text).toContain('<strong id="grant">58 / 60</strong>')
    expect(page.text).toContain('<strong id="prepaid">7</strong>')
    expect(page.text).toContain('<strong id="total">65</strong>')
    expect(page.text).toContain('<code>createSummary</code>')
    expect(page.text).toContain('Grant resets')
  })

  test('create a key: shown once, works on the API; revoke: refused by the API', async () => {
    const t = await setup()
    const { b, csrf } = await onSettings(t)
    const created = await b.post('/settings/keys', { csrf, name: 'laptop', library: 'live', scopes: ['notes:read', 'notes:write'] })
    expect(created.status).toBe(200)
    const key = created.text.match(/<code id="new-key">(svc_live_[A-Za-z0-9]{32})<\/code>/)![1]!
    expect(created.text).toContain('shown only this once')
    const stored = JSON.stringify(t.db.query('SELECT * FROM api_keys').all())
    expect(stored).not.toContain(key)

    const again = await b.get('/settings')
    expect(again.text).not.toContain(key)
    expect(again.text).toContain(`${key.slice(0, 17)}…`)
    expect(again.text).toContain('laptop')

    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(200)
    // The scopes chosen are the scopes given.
    expect((await t.call('GET', '/v1/folders', { token: key })).status).toBe(403)

    const id = again.text.match(/data-key-id="(key_[^"]+)"/)![1]!
    const noCsrf = await b.post(`/settings/keys/${id}/revoke`, {})
    expect(noCsrf.status).toBe(403)
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(200)

    const revoked = await b.post(`/settings/keys/${id}/revoke`, { csrf })
    expect(revoked.status).toBe(303)
    expect(revoked.location).toBe('/settings')
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(401)
    expect((await b.get('/settings')).text).toContain('revoked')
  })

  test('sandbox keys', async () => {
    const t = await setup()
    const { b, csrf } = await onSettings(t)
    const created = await b.post('/settings/keys', { csrf, library: 'sandbox', scopes: ['notes:read'] })
    const key = created.text.match(/<code id="new-key">(svc_test_[A-Za-z0-9]{32})<\/code>/)![1]!
    expect((await t.call('GET', '/v1/notes', { token: key })).status).toBe(200)
  })

  test('create-key form: CSRF refused, unknown or no scopes refused', async () => {
    const t = await setup()
    const { b, csrf } = await onSettings(t)
    expect((await b.post('/settings/keys', { library: 'live', scopes: 'notes:read' })).status).toBe(403)
    expect((await b.post('/settings/keys', { csrf: csrf.slice(1), library: 'live', scopes: 'notes:read' })).status).toBe(403)
    expect((await b.post('/settings/keys', { csrf, library: 'live' })).status).toBe(400)
    expect((await b.post('/settings/keys', { csrf, library: 'live', scopes: ['notes:read', 'admin'] })).status).toBe(400)
    expect((await b.post('/settings/keys', { csrf, library: 'prod', scopes: 'notes:read' })).status).toBe(400)
    expect(await t.services.accounts.listKeys(EMAIL)).toHaveLength(0)
  })

  test("can't revoke another account's key", async () => {
    const t = await setup()
    const other = await t.services.accounts.createKey({ email: 'eve@example.com' })
    const { b, csrf } = await onSettings(t)
    for (const target of [other.info.id, other.info.start]) {
      const r = await b.post(`/settings/keys/${encodeURIComponent(target)}/revoke`, { csrf })
      expect(r.status).toBe(404)
      expect(r.text).toContain('There is no such key in this account.')
    }
    expect((await t.services.accounts.listKeys('eve@example.com'))[0]!.revokedAt).toBeNull()
    expect((await t.call('GET', '/v1/notes', { token: other.key })).status).toBe(200)
  })

  test('user-controlled text is escaped', async () => {
    const t = await setup()
    const { b, csrf } = await onSettings(t)
    const created = await b.post('/settings/keys', { csrf, name: '<script>alert("x")</script>', library: 'live', scopes: 'notes:read' })
    expect(created.text).not.toContain('<script>alert')
    expect(created.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;')
    const failed = await t.browser().signIn('"><img src=x onerror=alert(1)>@x', 'pw')
    expect(failed.text).not.toContain('<img src=x')
    expect(esc(`<&"'>`)).toBe('&lt;&amp;&quot;&#39;&gt;')
  })
})

describe('CLI: notesvc accounts password', () => {
  test('reads the password from stdin, prints only the result, stores an argon2id hash', async () => {
    const { mkdtempSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { openDatabase } = await import('../../../src/db/database')
    const dir = mkdtempSync(join(tmpdir(), 'notesvc-pw-'))
    const env = { ...process.env, NOTESVC_DATA_DIR: dir }
    const runCli = async (args: string[], stdin: string) => {
      const p = Bun.spawn(['bun', 'run', 'src/cli.ts', ...args], { cwd: ROOT, env, stdin: new TextEncoder().encode(stdin), stdout: 'pipe', stderr: 'pipe' })
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
      return { out, err, code }
    }
    const first = await runCli(['accounts', 'password', '--email', 'cli@example.com'], 'first long password\n')
    expect(first).toEqual({ out: 'cli@example.com\tpassword set\taccount created\n', err: '', code: 0 })
    const second = await runCli(['accounts', 'password', '--email', 'cli@example.com', '--password-stdin'], 'second long password')
    expect(second).toEqual({ out: 'cli@example.com\tpassword set\n', err: '', code: 0 })
    const short = await runCli(['accounts', 'password', '--email', 'cli@example.com'], 'short\n')
    expect(short.code).toBe(2)
    expect(short.out).toBe('')
    expect(short.err).not.toContain('short\n')
    const db = openDatabase(join(dir, 'notesvc.db'))
    const hash = db.query<{ password_hash: string }, []>('SELECT password_hash FROM accounts').get()!.password_hash
    db.close()
    expect(hash.startsWith('$argon2id$')).toBe(true)
    expect(await Bun.password.verify('second long password', hash)).toBe(true)
  })
})
