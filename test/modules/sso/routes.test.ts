import { describe, expect, test } from 'bun:test'
import { createWebTestApp } from '../../helpers/web'

/**
 * The sign-in page's single sign-on button and the two routes' answers that need no provider: the
 * button carries `next` on (the OAuth authorize page's sign-in is /signin?next=/oauth/authorize?…),
 * a provider that does not answer, a callback without the browser's flow cookie. The flow itself,
 * against a real provider: browser.test.ts.
 */
const SSO = { NOTESVC_OIDC_ISSUER: 'http://127.0.0.1:9', NOTESVC_OIDC_CLIENT_ID: 'notesvc', NOTESVC_OIDC_PROVIDER_NAME: 'Example ID' }

const link = (html: string) => /<a class="sso" id="sso-signin" href="([^"]+)"[^>]*>([^<]+)<\/a>/.exec(html)

describe('the sign-in page', () => {
  test('with single sign-on: the button, carrying next, beside the password form', async () => {
    const b = createWebTestApp({ env: SSO }).browser()
    const next = '/oauth/authorize?client_id=cli_1&redirect_uri=http%3A%2F%2F127.0.0.1%3A7%2Fcb&state=s'
    const page = await b.get(`/signin?next=${encodeURIComponent(next)}`)
    const a = link(page.text)
    expect(a?.[2]).toBe('Sign in with Example ID')
    expect(a?.[1]).toBe(`/signin/oidc?next=${encodeURIComponent(next).replaceAll('&', '&amp;')}`)
    expect(page.text).toContain('<input type="password" name="password"')
  })

  test('without: no button, the password form as before', async () => {
    const page = await createWebTestApp().browser().get('/signin')
    expect(link(page.text)).toBeNull()
    expect(page.text).toContain('<input type="password" name="password"')
    // and no SSO routes at all
    expect((await createWebTestApp().browser().get('/signin/oidc/callback?code=x&state=y')).status).toBe(404)
  })

  test('password sign-in off: no form; a posted password is refused with what to do instead', async () => {
    const t = createWebTestApp({ env: { ...SSO, NOTESVC_PASSWORD_SIGNIN: 'off' } })
    await t.web().setPassword('pat@example.com', 'a long enough password')
    const b = t.browser()
    const page = await b.get('/signin')
    expect(link(page.text)?.[2]).toBe('Sign in with Example ID')
    expect(page.text).not.toContain('type="password"')
    // the right password, even: refused, and no session
    const r = await b.post('/signin', { email: 'pat@example.com', password: 'a long enough password', next: '/settings' }, { origin: 'http://localhost' })
    expect(r.status).toBe(403)
    expect(r.text).toContain('This notesvc does not accept passwords (NOTESVC_PASSWORD_SIGNIN=off). Sign in with Example ID instead.')
    expect(r.cookies.join()).not.toContain('notesvc_session=')
  })
})

describe('the routes, without a provider to talk to', () => {
  test('the provider does not answer: 502, a page saying what to try and whom to ask, no redirect', async () => {
    const b = createWebTestApp({ env: SSO }).browser()
    const r = await b.get('/signin/oidc?next=%2F')
    expect(r.status).toBe(502)
    expect(r.location).toBeNull()
    expect(r.text).toContain('notesvc could not reach Example ID (http://127.0.0.1:9) to complete the sign-in. Try again in a minute; if it keeps failing, ask your administrator')
  })

  // fails if the callback records account-less refusals again: every request would append a row
  test('callbacks without the browser\'s flow cookie, or with a forged one: 400 or 403, start again; nobody signed in, nothing in the audit log', async () => {
    const t = createWebTestApp({ env: SSO })
    const b = t.browser()
    for (let i = 0; i < 20; i++) {
      const r = await b.get(`/signin/oidc/callback?code=stolen-code-${i}&state=any`)
      expect(r.status).toBe(400)
      expect(r.text).toContain('This sign-in through Example ID expired or was started in another browser. Go back to the sign-in page and choose &quot;Sign in with Example ID&quot; again')
      expect(r.cookies.join()).not.toContain('notesvc_session=')
    }
    // a flow cookie made up by the caller: a state that differs, and one that matches with the provider's error
    const forged = (state: string) => `notesvc_sso_flow=${Buffer.from(JSON.stringify({ state, nonce: 'n', verifier: 'v', next: '/' })).toString('base64url')}`
    const mismatch = await b.get('/signin/oidc/callback?code=c&state=other', { cookie: forged('mine') })
    expect(mismatch.status).toBe(400)
    const error = await b.get('/signin/oidc/callback?error=access_denied&state=mine', { cookie: forged('mine') })
    expect(error.status).toBe(403)
    expect(error.text).toContain('The sign-in was cancelled or refused at Example ID (it answered &quot;access_denied&quot;)')
    expect(await t.store.all('SELECT action FROM audit_events')).toEqual([])
  })

  // The provider's error answer is shown on the page: what it said is text, never markup (fails if
  // messagePage stopped escaping, or the refusal were built without it), cut short, and the flow cookie
  // goes. The answer from a real provider, in Chromium: browser.test.ts.
  test('the provider\'s error answer, with markup in it: shown escaped, cut short, the flow cookie cleared', async () => {
    const t = createWebTestApp({ env: SSO })
    const b = t.browser()
    const flow = `notesvc_sso_flow=${Buffer.from(JSON.stringify({ state: 'mine', nonce: 'n', verifier: 'v', next: '/settings' })).toString('base64url')}`
    const description = `<script>alert(1)</script>${'x'.repeat(300)}`
    const q = new URLSearchParams({ error: 'server_error', error_description: description, state: 'mine' })
    const r = await b.get(`/signin/oidc/callback?${q}`, { cookie: flow })
    expect(r.status).toBe(403)
    expect(r.text).toContain('Example ID did not complete the sign-in (it answered &quot;server_error&quot;: &lt;script&gt;alert(1)&lt;/script&gt;xxx')
    expect(r.text).toContain('so nobody was signed in. Go back to the sign-in page and choose &quot;Sign in with Example ID&quot; again; if it happens again, ask your administrator')
    expect(r.text).not.toContain('<script>alert')
    expect(r.text).not.toContain('x'.repeat(200))
    // the way back keeps where the person was going
    expect(r.text).toContain('<a href="/signin?next=%2Fsettings">Back to sign-in</a>')
    expect(r.cookies.find(c => c.startsWith('notesvc_sso_flow='))).toMatch(/^notesvc_sso_flow=; HttpOnly; SameSite=Lax; Path=\/signin\/oidc; Max-Age=0/)
    expect(r.cookies.join()).not.toContain('notesvc_session=')
    expect(await t.store.all('SELECT action FROM audit_events')).toEqual([])
  })
})
