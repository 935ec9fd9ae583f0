import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { firstLine, freePort, ROOT } from '../../helpers/process'
import { inSteps } from '../../helpers/web'
import { startOidcProvider, type ProviderPerson } from '../../helpers/oidc-provider'

/**
 * Single sign-on in headless Chromium against a real OpenID Connect provider on loopback (panva's
 * oidc-provider, started here with its development login and consent pages), and notesvc as a real
 * server in a subprocess: the SSO flow, a second sign-in, the refusals (domain, group, unverified
 * email, tampered state and nonce), and password sign-in turned off.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const CLIENT_ID = 'notesvc-test'
const CLIENT_SECRET = 'a-client-secret-of-the-loopback-provider-0123456789'
const PROVIDER_NAME = 'Example Corp ID'
const CALLBACK = '/signin/oidc/callback'

// The people at the provider (their login name is the key). Changed during the tests.
const people: Record<string, ProviderPerson> = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice', groups: ['staff', 'notesvc-users'] },
  bob: { email: 'bob@elsewhere.org', email_verified: true, groups: ['notesvc-users'] },
  carol: { email: 'carol@example.com', email_verified: true, groups: ['sales'] },
  dave: { email: 'dave@example.com', email_verified: false, groups: ['notesvc-users'] },
  erin: { email: 'erin@example.com', email_verified: true, groups: ['notesvc-users'] },
  frank: { email: 'frank@example.com', email_verified: true, groups: ['notesvc-users'] },
}

interface Server { base: string; dataDir: string; proc: Subprocess<'ignore', 'pipe', 'pipe'>; said: () => string }
let provider: Awaited<ReturnType<typeof startOidcProvider>> | undefined
let browser: Browser | undefined
let restricted: Server | undefined
let ssoOnly: Server | undefined

async function startNotesvc(port: number, env: Record<string, string>): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-sso-'))
  const base = `http://127.0.0.1:${port}`
  const proc = Bun.spawn(['bun', 'run', 'test/fixtures/web-server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env, NOTESVC_DATA_DIR: dataDir, PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_LLM: 'builtin',
      NOTESVC_OIDC_ISSUER: provider!.issuer, NOTESVC_OIDC_CLIENT_ID: CLIENT_ID, NOTESVC_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      NOTESVC_OIDC_PROVIDER_NAME: PROVIDER_NAME, NOTESVC_OIDC_SCOPES: 'openid email profile groups', ...env,
    },
    stdin: 'ignore', stdout: 'pipe', stderr: 'pipe',
  })
  expect(await firstLine(proc.stdout)).toBe(`listening ${port}`)
  let said = ''
  void (async () => { for await (const chunk of proc.stderr) said = (said + new TextDecoder().decode(chunk)).slice(-4000) })()
  return { base, dataDir, proc, said: () => said }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const [portA, portB] = [await freePort(), await freePort()]
  // The provider is at localhost, notesvc at 127.0.0.1: two sites, as a real deployment has.
  provider = await startOidcProvider({
    redirectUris: [`http://127.0.0.1:${portA}${CALLBACK}`, `http://127.0.0.1:${portB}${CALLBACK}`],
    clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, people,
  })
  restricted = await startNotesvc(portA, { NOTESVC_OIDC_ALLOWED_DOMAINS: 'example.com', NOTESVC_OIDC_GROUPS_CLAIM: 'groups', NOTESVC_OIDC_ALLOWED_GROUPS: 'notesvc-users' })
  ssoOnly = await startNotesvc(portB, { NOTESVC_PASSWORD_SIGNIN: 'off' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}, 90_000)

afterAll(async () => {
  await browser?.close()
  for (const s of [restricted, ssoOnly]) {
    s?.proc.kill('SIGTERM')
    await s?.proc.exited
    if (s) rmSync(s.dataDir, { recursive: true, force: true })
  }
  await provider?.stop()
})

/**
 * A fresh browser (no provider session, no notesvc session) whose pages (main-frame navigations) are
 * kept in `visited`. Not requests: listening to request or response events brings on the Playwright
 * client's "Cannot find parent object request…" race under load (docs/decisions.md, "The web
 * library"); the provider's own record of its requests shows the redirects and back-channel calls.
 */
async function freshPage(): Promise<{ context: BrowserContext; page: Page; visited: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 1100, height: 900 } })
  const page = await context.newPage()
  page.setDefaultTimeout(45_000)
  const visited: string[] = []
  page.on('framenavigated', f => { if (f === page.mainFrame()) visited.push(f.url()) })
  return { context, page, visited }
}

/** Clicks "Sign in with …" on notesvc's sign-in page and signs in at the provider's pages as `login`. */
async function signInAtProvider(page: Page, login: string, s: Server): Promise<void> {
  await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click()
  await page.waitForURL(url => url.origin === provider!.issuer)
  await page.locator('input[name=login]').fill(login)
  await page.locator('input[name=password]').fill('any password the dev login accepts')
  await page.getByRole('button', { name: 'Sign-in' }).click()
  // the provider's consent page, then back to notesvc
  await page.getByRole('button', { name: 'Continue' }).click()
  await page.waitForURL(url => url.href.startsWith(s.base))
}

/** The rows notesvc keeps, read from its SQLite file. */
function rows<T>(s: Server, sql: string, ...args: string[]): T[] {
  const db = new Database(join(s.dataDir, 'notesvc.db'), { readonly: true })
  try {
    return db.query(sql).all(...args) as T[]
  } finally {
    db.close()
  }
}

const short = (urls: string[]) => urls.map(u => u.replace(/([?&](state|code|nonce|code_challenge|iss)=)[^&]+/g, '$1…'))

test('SSO in Chromium: /signin → the provider → the library, the account made with the provider\'s email; a second sign-in finds it', async () => {
  const s = restricted!
  await inSteps(s.said, async step => {
    step('open the library signed out')
    const { context, page, visited } = await freshPage()
    await page.goto(`${s.base}/`)
    expect(new URL(page.url()).pathname).toBe('/signin')

    step('sign in at the provider as alice')
    await signInAtProvider(page, 'alice', s)
    expect(page.url()).toBe(`${s.base}/`)
    await expect(page.locator('header .who').textContent()).resolves.toBe('alice@example.com')
    console.log(`first sign-in visited:\n  ${short(visited).join('\n  ')}`)
    // the pages: notesvc's sign-in, the provider's login and consent pages, the library
    const where = (u: string) => { const x = new URL(u); return `${x.origin === s.base ? 'notesvc' : 'provider'} ${x.pathname.replace(/\/interaction\/.+/, '/interaction/…')}` }
    expect(visited.map(where).slice(0, 4)).toEqual(['notesvc /signin', 'provider /interaction/…', 'provider /interaction/…', 'notesvc /'])
    // at the provider: the authorization request, login, consent, then notesvc's code exchange and userinfo call
    const at = provider!.requests.map(r => r.replace(/\/(interaction|auth)\/[^ ]+/, '/$1/…'))
    console.log(`the provider answered:\n  ${at.join('\n  ')}`)
    // (not the discovery document, the keys, or a favicon Chromium may ask for)
    expect(at.filter(r => /^\S+ \/(auth|interaction|token|me)\b/.test(r))).toEqual([
      'GET /auth 303', 'GET /interaction/… 200', 'POST /interaction/… 303', 'GET /auth/… 303',
      'GET /interaction/… 200', 'POST /interaction/… 303', 'GET /auth/… 303', 'POST /token 200', 'GET /me 200',
    ])
    provider!.requests.length = 0

    step('the account was made, on the free plan, linked to the provider')
    const accounts = rows<{ id: string; email: string; plan: string }>(s, 'SELECT id, email, plan FROM accounts')
    expect(accounts.map(a => [a.email, a.plan])).toEqual([['alice@example.com', 'free']])
    const links = rows<{ issuer: string; subject: string; account_id: string }>(s, 'SELECT issuer, subject, account_id FROM sso_identities')
    expect(links).toEqual([{ issuer: provider!.issuer, subject: 'alice', account_id: accounts[0]!.id }])
    console.log(`account created: ${JSON.stringify(accounts[0])}, linked to ${provider!.issuer} subject alice`)
    const events = rows<{ action: string; actor_type: string; actor_id: string; details: string }>(s, 'SELECT action, actor_type, actor_id, details FROM audit_events ORDER BY at, id')
    expect(events.map(e => [e.action, e.actor_type, e.actor_id, JSON.parse(e.details).reason ?? null])).toEqual([
      ['account.created', 'sso', 'alice', null],
      ['signin.succeeded', 'sso', 'alice', 'created'],
    ])
    // never a token or a code in the audit log
    expect(events.map(e => e.details).join(' ')).not.toMatch(/eyJ|code/)

    step('sign out, change alice\'s email at the provider, sign in again')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(url => url.pathname === '/signin')
    people.alice!.email = 'alice.renamed@example.com'
    visited.length = 0
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click()
    // the provider remembers alice (its session and her consent): straight back to notesvc, to the
    // settings page (where /signin sends people when it was not opened on the way to a page)
    await page.waitForURL(`${s.base}/settings`)
    console.log(`second sign-in visited:\n  ${short(visited).join('\n  ')}\nthe provider answered:\n  ${provider!.requests.join('\n  ')}`)
    // no login page this time: the provider's session and alice's consent are remembered
    expect(visited.some(u => u.includes('/interaction/'))).toBe(false)
    expect(provider!.requests.filter(r => r.startsWith('GET /auth') || r.startsWith('POST /token'))).toEqual(['GET /auth 303', 'POST /token 200'])
    await expect(page.locator('header .who').textContent()).resolves.toBe('alice@example.com')
    // the same account (found by issuer and subject, not by the new email): no second one
    expect(rows<{ id: string }>(s, 'SELECT id FROM accounts').map(a => a.id)).toEqual([accounts[0]!.id])
    console.log(`second sign-in: the same account ${accounts[0]!.id} (the provider now says alice.renamed@example.com); accounts in notesvc: 1`)
    expect(rows<{ details: string }>(s, "SELECT details FROM audit_events WHERE action = 'signin.succeeded' ORDER BY at, id").map(e => JSON.parse(e.details).reason)).toEqual(['created', 'linked'])
    await context.close()
  })
}, 180_000)

/**
 * A tamper for refusedAs: once the browser is at the provider (the flow cookie set by the button),
 * `field` of the flow cookie gets an "x" more. (Playwright cannot route the provider's redirect to
 * the callback, the last of a redirect chain, so the browser's side of the check is changed instead.)
 */
function changeFlowCookie(s: Server, field: 'state' | 'nonce') {
  return async (page: Page, context: BrowserContext) => {
    page.on('framenavigated', async f => {
      if (f !== page.mainFrame() || !f.url().startsWith(`${provider!.issuer}/interaction/`)) return
      const flow = (await context.cookies(`${s.base}/signin/oidc/callback`)).find(c => c.name === 'notesvc_sso_flow')
      if (!flow) return
      const value = JSON.parse(Buffer.from(flow.value, 'base64url').toString())
      if (value[field].endsWith('x')) return
      value[field] += 'x'
      await context.addCookies([{ ...flow, value: Buffer.from(JSON.stringify(value)).toString('base64url') }])
    })
  }
}

/** Signs in as `login` in a fresh browser and gives the refusal page's heading and text. */
async function refusedAs(s: Server, login: string, tamper?: (page: Page, context: BrowserContext) => Promise<void>): Promise<{ status: number; heading: string; text: string; visited: string[] }> {
  const { context, page, visited } = await freshPage()
  await page.goto(`${s.base}/signin`)
  if (tamper) await tamper(page, context)
  await signInAtProvider(page, login, s)
  // the callback's status, as the browser got it (Navigation Timing's responseStatus)
  expect(new URL(page.url()).pathname).toBe(CALLBACK)
  const status = await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming & { responseStatus: number }).responseStatus)
  const heading = (await page.locator('h1').textContent())!
  const text = (await page.locator('main').textContent())!
  await context.close()
  return { status, heading, text, visited }
}

const accountEmails = (s: Server) => rows<{ email: string }>(s, 'SELECT email FROM accounts ORDER BY email').map(a => a.email)
const failures = (s: Server) => rows<{ actor_id: string | null; details: string }>(s, "SELECT actor_id, details FROM audit_events WHERE action = 'signin.failed' ORDER BY at, id").map(e => [e.actor_id, JSON.parse(e.details).reason])

test('refused: a domain not allowed, a group not allowed, an unverified email, a tampered state, a tampered nonce; nothing created', async () => {
  const s = restricted!
  const before = accountEmails(s)
  await inSteps(s.said, async step => {
    step('bob: verified, in the group, but @elsewhere.org')
    const bob = await refusedAs(s, 'bob')
    console.log(`bob refused: ${bob.status} ${bob.heading}`)
    expect([bob.status, bob.heading]).toEqual([403, 'Email domain not allowed'])
    expect(bob.text).toContain('bob@elsewhere.org is not in a domain allowed to use this notesvc (example.com). Ask your administrator to allow your domain')

    step('carol: @example.com, but only in the group sales')
    const carol = await refusedAs(s, 'carol')
    console.log(`carol refused: ${carol.status} ${carol.heading}`)
    expect([carol.status, carol.heading]).toEqual([403, 'Not in an allowed group'])
    expect(carol.text).toContain(`Ask your administrator to add you to one of these groups at ${PROVIDER_NAME}: notesvc-users.`)

    step('dave: his email is not verified at the provider')
    const dave = await refusedAs(s, 'dave')
    console.log(`dave refused: ${dave.status} ${dave.heading}`)
    expect([dave.status, dave.heading]).toEqual([403, 'Email address not verified'])
    expect(dave.text).toContain(`Ask your administrator to verify your email address at ${PROVIDER_NAME}, then sign in again.`)

    step('erin, with the state this browser keeps changed before the provider answers')
    const tamperedState = await refusedAs(s, 'erin', changeFlowCookie(s, 'state'))
    console.log(`erin (tampered state) refused: ${tamperedState.status} ${tamperedState.heading}`)
    expect([tamperedState.status, tamperedState.heading]).toEqual([400, 'Sign-in not accepted'])
    expect(tamperedState.text).toContain('does not belong to the sign-in this browser started')

    step('erin, with the nonce this browser keeps changed before the provider answers')
    const tamperedNonce = await refusedAs(s, 'erin', changeFlowCookie(s, 'nonce'))
    console.log(`erin (tampered nonce) refused: ${tamperedNonce.status} ${tamperedNonce.heading}`)
    expect([tamperedNonce.status, tamperedNonce.heading]).toEqual([400, 'Sign-in not accepted'])
    expect(tamperedNonce.text).toContain('could not be verified')

    step('mallory: another person at the provider with alice\'s email (verified, allowed)')
    people.mallory = { email: 'alice@example.com', email_verified: true, groups: ['notesvc-users'] }
    const mallory = await refusedAs(s, 'mallory')
    console.log(`mallory (alice's email, another subject) refused: ${mallory.status} ${mallory.heading}`)
    expect([mallory.status, mallory.heading]).toEqual([409, 'Account linked to someone else'])

    step('nothing was created; every refusal of a person the provider named is in the audit log with its reason')
    expect(accountEmails(s)).toEqual(before)
    expect(rows(s, "SELECT subject FROM sso_identities WHERE subject <> 'alice'")).toEqual([])
    // the tampered state and nonce named nobody: not recorded (anyone could append such rows)
    expect(failures(s).slice(-4)).toEqual([
      ['bob', 'domain_not_allowed'],
      ['carol', 'group_not_allowed'],
      ['dave', 'email_unverified'],
      ['mallory', 'account_linked_elsewhere'],
    ])
    expect(failures(s).filter(f => f[0] === null)).toEqual([])
  })
}, 240_000)

// The provider's error answer (RFC 6749 4.1.2.1): frank, whom notesvc would let in, cancels on the
// provider's consent page, and the provider sends the browser back with error=access_denied.
test('the person cancels at the provider: 403, what happened and what to do; nothing created, the flow cookie cleared, no audit row', async () => {
  const s = restricted!
  const count = (table: string) => rows<{ n: number }>(s, `SELECT COUNT(*) AS n FROM ${table}`)[0]!.n
  const before = { accounts: accountEmails(s), audit: count('audit_events'), sessions: count('sessions'), links: count('sso_identities') }
  await inSteps(s.said, async step => {
    step('frank signs in at the provider, then cancels on its consent page')
    const { context, page } = await freshPage()
    provider!.requests.length = 0
    await page.goto(`${s.base}/signin?next=%2Fsettings`)
    await page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).click()
    await page.waitForURL(url => url.origin === provider!.issuer)
    await page.locator('input[name=login]').fill('frank')
    await page.locator('input[name=password]').fill('any password the dev login accepts')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.getByRole('button', { name: 'Continue' }).waitFor()
    // while at the provider, the browser holds the flow cookie the button set
    const names = async () => (await context.cookies(`${s.base}${CALLBACK}`)).map(c => c.name)
    expect(await names()).toContain('notesvc_sso_flow')
    await page.getByRole('link', { name: '[ Cancel ]' }).click()
    await page.waitForURL(url => url.href.startsWith(s.base))

    step('the callback page says what happened and what to do')
    const at = new URL(page.url())
    expect([at.pathname, at.searchParams.get('error'), at.searchParams.get('error_description')]).toEqual([CALLBACK, 'access_denied', 'End-User aborted interaction'])
    const status = await page.evaluate(() => (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming & { responseStatus: number }).responseStatus)
    const heading = await page.locator('h1').textContent()
    const message = await page.locator('main p').first().textContent()
    console.log(`frank cancelled at the provider: ${status} ${heading}: ${message}`)
    expect([status, heading]).toEqual([403, `${PROVIDER_NAME} did not sign you in`])
    expect(message).toBe(`The sign-in was cancelled or refused at ${PROVIDER_NAME} (it answered "access_denied": End-User aborted interaction), so nobody was signed in. To sign in, go back to the sign-in page, choose "Sign in with ${PROVIDER_NAME}" again and allow notesvc when ${PROVIDER_NAME} asks; if ${PROVIDER_NAME} refuses you, ask your administrator to give you access to notesvc there.`)
    // the way back keeps where frank was going
    expect(await page.getByRole('link', { name: 'Back to sign-in' }).getAttribute('href')).toBe('/signin?next=%2Fsettings')

    step('the flow cookie is gone, no session; notesvc redeemed nothing at the provider')
    // (the sign-in page's CSRF cookie stays: it is no session)
    expect((await names()).filter(n => n === 'notesvc_sso_flow' || n === 'notesvc_session')).toEqual([])
    expect(provider!.requests.filter(r => r.startsWith('POST /token') || r.startsWith('GET /me'))).toEqual([])
    await context.close()

    step('nothing was created, and the refusal named nobody: no audit row (docs/decisions.md, "Single sign-on")')
    expect({ accounts: accountEmails(s), audit: count('audit_events'), sessions: count('sessions'), links: count('sso_identities') }).toEqual(before)
    expect(accountEmails(s)).not.toContain('frank@example.com')
  })
}, 180_000)

test('password sign-in off: no password form, POST /signin refused with a message; SSO still signs in', async () => {
  const s = ssoOnly!
  await inSteps(s.said, async step => {
    step('the sign-in page has the provider\'s button and no password form')
    const { context, page } = await freshPage()
    await page.goto(`${s.base}/signin`)
    expect(await page.locator('input[type=password]').count()).toBe(0)
    expect(await page.locator('form[action="/signin"]').count()).toBe(0)
    await expect(page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` }).isVisible()).resolves.toBe(true)

    step('a password posted anyway is refused')
    const res = await fetch(`${s.base}/signin`, {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.base },
      body: new URLSearchParams({ email: 'owner@example.com', password: 'whatever-password' }),
    })
    const body = await res.text()
    const message = /<p>([^<]+)<\/p>/.exec(body)?.[1]
    console.log(`POST /signin with password sign-in off: ${res.status} "${message}"`)
    expect(res.status).toBe(403)
    expect(message).toBe(`This notesvc does not accept passwords (NOTESVC_PASSWORD_SIGNIN=off). Sign in with ${PROVIDER_NAME} instead.`)
    expect(res.headers.getSetCookie().join()).not.toContain('notesvc_session')

    step('erin signs in through the provider')
    await signInAtProvider(page, 'erin', s)
    expect(page.url()).toBe(`${s.base}/settings`)
    await expect(page.locator('header .who').textContent()).resolves.toBe('erin@example.com')
    expect(accountEmails(s)).toEqual(['erin@example.com'])
    await context.close()
  })
}, 180_000)
