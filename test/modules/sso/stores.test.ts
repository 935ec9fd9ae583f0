import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { identityServices } from '../../helpers/identity'
import { idTokenAtProvider, signInAtProviderWithoutBrowser, startOidcProvider, type ProviderPerson } from '../../helpers/oidc-provider'
import { createAuditRepo } from '../../../src/modules/audit/repo'
import { createAuditService } from '../../../src/modules/audit/service'
import { createSsoLinks } from '../../../src/modules/sso/links'
import { createSsoService } from '../../../src/modules/sso/service'
import { createIdTokenVerifier } from '../../../src/modules/oidc/id-token'
import { loadConfig } from '../../../src/config'
import type { Store } from '../../../src/db/store'

/**
 * The SSO service on each back end, against the real provider on loopback (its pages driven without
 * a browser): the account made, found again by issuer and subject after an email change, an existing
 * account matched by its verified email, a second subject with a linked email refused, and a refused
 * group that writes nothing; and the two ways in through the provider (the browser's sign-in, and its
 * ID token sent as an API bearer) under one linking rule and one restriction check. The browser flow:
 * browser.test.ts.
 */
const PUBLIC_URL = 'http://127.0.0.1:7'
const REDIRECT = `${PUBLIC_URL}/signin/oidc/callback`
const people: Record<string, ProviderPerson> = {}
let provider: Awaited<ReturnType<typeof startOidcProvider>>

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [REDIRECT], clientId: 'notesvc', clientSecret: 'a-secret-of-forty-characters-0123456789ab', people, claimsInIdToken: true })
})
afterAll(() => provider?.stop())

for (const b of backEnds) describe.skipIf(b.skip)(`single sign-on on ${b.name}`, () => {
  const open = closingAfterEach(b)

  // one clock and id generator per store, so that its audit events sort in the order they were made
  const identities = new Map<Store, ReturnType<typeof identityServices>>()
  function ssoOver(store: Store, env: Record<string, string> = {}) {
    if (!identities.has(store)) identities.set(store, identityServices(store))
    const { accounts, clock, ids } = identities.get(store)!
    const audit = createAuditService({ repo: createAuditRepo(store), clock, ids })
    const config = loadConfig({ NOTESVC_OIDC_ISSUER: provider.issuer, NOTESVC_OIDC_CLIENT_ID: 'notesvc', NOTESVC_OIDC_SCOPES: 'openid email profile groups', ...env })
    const links = createSsoLinks({ store, config: config.sso, issuer: provider.issuer, accounts, audit, clock })
    const sso = createSsoService({ config: config.sso, issuer: provider.issuer, clientId: 'notesvc', clientSecret: 'a-secret-of-forty-characters-0123456789ab', publicUrl: PUBLIC_URL, links, clock })
    // the bearer path as createApp builds it (on the real clock: the provider's tokens are issued now)
    const verify = createIdTokenVerifier({ issuer: provider.issuer, audience: 'notesvc', links })
    /** the account an ID token of `login` is taken as when sent as a bearer, or null (a 401) */
    async function bearer(login: string): Promise<string | null> {
      const idToken = await idTokenAtProvider({ issuer: provider.issuer, clientId: 'notesvc', clientSecret: 'a-secret-of-forty-characters-0123456789ab', redirectUri: REDIRECT, login })
      return (await verify(idToken))?.accountId ?? null
    }
    /** a whole sign-in as `login` at the provider, and its outcome */
    async function signIn(login: string) {
      const begun = await sso.begin('/')
      if (!('url' in begun)) throw new Error(`begin refused: ${begun.ok ? '' : begun.message}`)
      const search = await signInAtProviderWithoutBrowser(begun.url, login, REDIRECT)
      return sso.finish(search, begun.flow, { ip: '127.0.0.1', userAgent: 'test' })
    }
    return { sso, accounts, signIn, bearer }
  }

  const tables = async (store: Store) => ({
    // sorted here: the back ends' collations order capitals differently
    accounts: (await store.all<{ email: string; plan: string }>('SELECT email, plan FROM accounts')).map(a => `${a.email} ${a.plan}`).sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())),
    links: (await store.all<{ subject: string; email: string }>('SELECT subject, email FROM sso_identities ORDER BY subject')).map(l => `${l.subject} ${l.email}`),
    events: (await store.all<{ action: string; actor_id: string | null; details: string }>('SELECT action, actor_id, details FROM audit_events ORDER BY at, id')).map(e => `${e.action} ${e.actor_id} ${JSON.parse(e.details).reason ?? ''}`.trim()),
  })

  test('made at the first sign-in, found by subject after an email change, an existing account matched by its verified email', async () => {
    const store = await open()
    const { signIn, accounts } = ssoOver(store, { NOTESVC_OIDC_DEFAULT_PLAN: 'pro' })
    people[`ann-${b.name}`] = { email: 'ann@example.com', email_verified: true }
    const first = await signIn(`ann-${b.name}`)
    expect(first).toMatchObject({ ok: true, email: 'ann@example.com', created: true, next: '/' })

    people[`ann-${b.name}`]!.email = 'ann.new@example.com'
    const second = await signIn(`ann-${b.name}`)
    expect(second).toMatchObject({ ok: true, created: false })
    expect(second.ok && first.ok && second.accountId === first.accountId).toBe(true)

    // an account made before (by the operator), matched by the provider's verified email
    const made = await accounts.createAccount('Ben@Example.com', 'free')
    people[`ben-${b.name}`] = { email: 'ben@example.com', email_verified: true }
    expect(await signIn(`ben-${b.name}`)).toMatchObject({ ok: true, accountId: made.account.id, created: false })

    expect(await tables(store)).toEqual({
      accounts: ['ann@example.com pro', 'Ben@Example.com free'],
      links: [`ann-${b.name} ann.new@example.com`, `ben-${b.name} ben@example.com`],
      events: [
        `account.created ann-${b.name}`,
        `signin.succeeded ann-${b.name} created`,
        `signin.succeeded ann-${b.name} linked`,
        `signin.succeeded ben-${b.name} matched_email`,
      ],
    })
  })

  test('refused, writing nothing but the audit event: another subject with a linked email; a group not allowed', async () => {
    const store = await open()
    const { signIn } = ssoOver(store)
    people[`cat-${b.name}`] = { email: 'cat@example.com', email_verified: true }
    people[`impostor-${b.name}`] = { email: 'CAT@example.com', email_verified: true }
    expect(await signIn(`cat-${b.name}`)).toMatchObject({ ok: true, created: true })
    expect(await signIn(`impostor-${b.name}`)).toMatchObject({ ok: false, reason: 'account_linked_elsewhere', status: 409 })

    const restricted = ssoOver(store, { NOTESVC_OIDC_ALLOWED_GROUPS: 'notesvc' })
    people[`dan-${b.name}`] = { email: 'dan@example.com', email_verified: true, groups: ['sales'] }
    expect(await restricted.signIn(`dan-${b.name}`)).toMatchObject({ ok: false, reason: 'group_not_allowed', status: 403 })
    // cat too, now that groups are required: linked or not, the restriction holds
    expect(await restricted.signIn(`cat-${b.name}`)).toMatchObject({ ok: false, reason: 'group_not_allowed' })
    // cat's refusal is in cat's account's log (the owner reads it there); dan has no account
    const byAccount = await store.all<{ actor_id: string; account_id: string | null }>("SELECT actor_id, account_id FROM audit_events WHERE action = 'signin.failed' AND details LIKE '%group_not_allowed%' ORDER BY at, id")
    const cat = await store.get<{ id: string }>("SELECT id FROM accounts WHERE email = 'cat@example.com'")
    expect(byAccount).toEqual([{ actor_id: `dan-${b.name}`, account_id: null }, { actor_id: `cat-${b.name}`, account_id: cat!.id }])

    expect(await tables(store)).toEqual({
      accounts: ['cat@example.com free'],
      links: [`cat-${b.name} cat@example.com`],
      events: [
        `account.created cat-${b.name}`,
        `signin.succeeded cat-${b.name} created`,
        `signin.failed impostor-${b.name} account_linked_elsewhere`,
        `signin.failed dan-${b.name} group_not_allowed`,
        `signin.failed cat-${b.name} group_not_allowed`,
      ],
    })
  })

  // Fails if the email's domain were compared as sent (no toLowerCase in links.ts) or the allowed
  // domains as configured (config.ts): domains are not case-sensitive, so neither may refuse.
  test('allowed domains written in capitals admit their people, whatever case the email is in; another domain is refused; both ways in', async () => {
    const store = await open()
    const byDomain = ssoOver(store, { NOTESVC_OIDC_ALLOWED_DOMAINS: 'Example.COM' })
    people[`alice-${b.name}`] = { email: 'alice@example.com', email_verified: true }
    people[`bob-${b.name}`] = { email: 'Bob@EXAMPLE.com', email_verified: true }
    people[`carl-${b.name}`] = { email: 'carl@example.org', email_verified: true }
    people[`dora-${b.name}`] = { email: 'dora@Example.Com', email_verified: true }
    people[`emil-${b.name}`] = { email: 'emil@EXAMPLE.ORG', email_verified: true }
    expect(await byDomain.signIn(`alice-${b.name}`)).toMatchObject({ ok: true, email: 'alice@example.com', created: true })
    expect(await byDomain.signIn(`bob-${b.name}`)).toMatchObject({ ok: true, created: true })
    expect(await byDomain.signIn(`carl-${b.name}`)).toMatchObject({ ok: false, reason: 'domain_not_allowed', status: 403 })
    expect(await byDomain.bearer(`dora-${b.name}`)).toMatch(/^acct_/)
    expect(await byDomain.bearer(`emil-${b.name}`)).toBeNull()
    expect((await tables(store)).accounts).toEqual(['alice@example.com free', 'Bob@EXAMPLE.com free', 'dora@Example.Com free'])
  }, 20_000)

  // Fails if an email_verified that is missing, or the string "false", were taken as verified: the
  // provider's unverified email would then be matched to the existing account of that address.
  test('an email_verified missing or "false" (a string): not matched to the existing account of that email, by the browser or as a bearer', async () => {
    const store = await open()
    const { signIn, bearer, accounts } = ssoOver(store)
    // an account of its own for each kind and way in, so that one let in does not hide another
    const outcomes: Record<string, unknown> = {}
    for (const [kind, claim] of [['missing', {}], ['false', { email_verified: 'false' as const }]] as const) {
      for (const way of ['browser', 'bearer']) {
        const email = `lee-${kind}-${way}@example.com`
        await accounts.createAccount(email, 'pro')
        people[`lee-${kind}-${way}-${b.name}`] = { email, ...claim }
        if (way === 'browser') {
          const r = await signIn(`lee-${kind}-${way}-${b.name}`)
          outcomes[`${kind} by the browser`] = r.ok ? `signed in to ${email}'s account` : `${r.status} ${r.reason}`
        } else {
          outcomes[`${kind} as a bearer`] = (await bearer(`lee-${kind}-${way}-${b.name}`)) ? `taken as ${email}'s account` : '401'
        }
      }
    }
    expect(outcomes).toEqual({
      'missing by the browser': '403 email_unverified', 'missing as a bearer': '401',
      'false by the browser': '403 email_unverified', 'false as a bearer': '401',
    })
    const { accounts: left, links, events } = await tables(store)
    expect({ accounts: left.length, links, events }).toEqual({
      accounts: 4,
      links: [],
      events: [`signin.failed lee-missing-browser-${b.name} email_unverified`, `signin.failed lee-false-browser-${b.name} email_unverified`],
    })
    // the string "true" is verified (as Amazon Cognito sends it): matched, so the refusals above were for the claim
    people[`lee-true-${b.name}`] = { email: 'lee-missing-bearer@example.com', email_verified: 'true' }
    expect(await bearer(`lee-true-${b.name}`)).toBe((await accountOf(store, 'lee-missing-bearer@example.com')).id)
  }, 20_000)

  const accountOf = async (store: Store, email: string) => (await store.get<{ id: string; oidc_subject: string | null }>('SELECT id, oidc_subject FROM accounts WHERE email = ?', [email]))!

  // each fails with separate links: before, the bearer path wrote accounts.oidc_subject and the browser
  // read only sso_identities, so the second person got into the first one's account
  test('browser first: an ID token of another person with the same verified email is refused; the person\'s own ID token is their account', async () => {
    const store = await open()
    const { signIn, bearer } = ssoOver(store)
    people[`fay-${b.name}`] = { email: 'fay@example.com', email_verified: true }
    people[`fay-twin-${b.name}`] = { email: 'fay@example.com', email_verified: true }
    const first = await signIn(`fay-${b.name}`)
    expect(first).toMatchObject({ ok: true, created: true })
    expect(await bearer(`fay-twin-${b.name}`)).toBeNull()
    expect(await bearer(`fay-${b.name}`)).toBe(first.ok ? first.accountId : 'none')
    expect(await accountOf(store, 'fay@example.com')).toEqual({ id: first.ok ? first.accountId : '', oidc_subject: null })
    expect((await tables(store)).links).toEqual([`fay-${b.name} fay@example.com`])
  })

  test('ID token first: the browser sign-in of another person with the same verified email is refused (409)', async () => {
    const store = await open()
    const { signIn, bearer } = ssoOver(store)
    people[`gil-${b.name}`] = { email: 'gil@example.com', email_verified: true }
    people[`gil-twin-${b.name}`] = { email: 'Gil@example.com', email_verified: true }
    const account = await bearer(`gil-${b.name}`)
    expect(account).toMatch(/^acct_/)
    expect(await signIn(`gil-twin-${b.name}`)).toMatchObject({ ok: false, reason: 'account_linked_elsewhere', status: 409 })
    // and gil's browser sign-in finds the account the bearer made
    expect(await signIn(`gil-${b.name}`)).toMatchObject({ ok: true, accountId: account, created: false })
    expect(await tables(store)).toEqual({
      accounts: ['gil@example.com free'],
      links: [`gil-${b.name} gil@example.com`],
      events: [
        `account.created gil-${b.name}`,
        `signin.succeeded gil-${b.name} created`,
        `signin.failed gil-twin-${b.name} account_linked_elsewhere`,
        `signin.succeeded gil-${b.name} linked`,
      ],
    })
    // the bearer's link is told from the browser's in the log; the bearer's later requests write nothing
    const credential = await store.all<{ details: string }>("SELECT details FROM audit_events WHERE action = 'signin.succeeded' ORDER BY at, id")
    expect(credential.map(e => JSON.parse(e.details).credential ?? null)).toEqual(['id_token', null])
    expect(await bearer(`gil-${b.name}`)).toBe(account)
    expect((await tables(store)).events).toHaveLength(4)
  })

  test('an account linked by the old ID-token link (accounts.oidc_subject) keeps its person and refuses another', async () => {
    const store = await open()
    const { signIn, bearer, accounts } = ssoOver(store)
    const { account } = await accounts.createAccount('hal@example.com', 'free')
    await store.run('UPDATE accounts SET oidc_subject = ? WHERE id = ?', [`hal-${b.name}`, account.id])
    people[`hal-${b.name}`] = { email: 'hal@example.com', email_verified: true }
    people[`hal-twin-${b.name}`] = { email: 'hal@example.com', email_verified: true }
    expect(await signIn(`hal-twin-${b.name}`)).toMatchObject({ ok: false, reason: 'account_linked_elsewhere' })
    expect(await bearer(`hal-twin-${b.name}`)).toBeNull()
    expect(await bearer(`hal-${b.name}`)).toBe(account.id)
    // the link moved into sso_identities, where the browser finds it too
    expect((await tables(store)).links).toEqual([`hal-${b.name} hal@example.com`])
    expect(await signIn(`hal-${b.name}`)).toMatchObject({ ok: true, accountId: account.id })
  })

  // fails if the bearer path skips the restriction check: anyone at the provider gets an account
  test('the allowed domains and groups hold for ID tokens as bearers too, linked or not; nothing created', async () => {
    const store = await open()
    const open_ = ssoOver(store)
    people[`ivy-${b.name}`] = { email: 'ivy@example.com', email_verified: true, groups: ['sales'] }
    const ivy = await open_.bearer(`ivy-${b.name}`)
    expect(ivy).toMatch(/^acct_/)
    const byDomain = ssoOver(store, { NOTESVC_OIDC_ALLOWED_DOMAINS: 'example.org' })
    const byGroup = ssoOver(store, { NOTESVC_OIDC_ALLOWED_GROUPS: 'notesvc' })
    people[`jon-${b.name}`] = { email: 'jon@example.com', email_verified: true, groups: ['notesvc'] }
    people[`kim-${b.name}`] = { email: 'kim@example.org', email_verified: true, groups: ['sales'] }
    expect(await byDomain.bearer(`jon-${b.name}`)).toBeNull()
    expect(await byDomain.bearer(`ivy-${b.name}`)).toBeNull()
    expect(await byGroup.bearer(`kim-${b.name}`)).toBeNull()
    expect(await byGroup.bearer(`ivy-${b.name}`)).toBeNull()
    expect((await tables(store)).accounts).toEqual(['ivy@example.com free'])
    // allowed: jon by group, kim by domain
    expect(await byGroup.bearer(`jon-${b.name}`)).toMatch(/^acct_/)
    expect(await byDomain.bearer(`kim-${b.name}`)).toMatch(/^acct_/)
  })
})
