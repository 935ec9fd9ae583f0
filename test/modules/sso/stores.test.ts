import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { identityServices } from '../../helpers/identity'
import { signInAtProviderWithoutBrowser, startOidcProvider, type ProviderPerson } from '../../helpers/oidc-provider'
import { createAuditRepo } from '../../../src/modules/audit/repo'
import { createAuditService } from '../../../src/modules/audit/service'
import { createSsoService } from '../../../src/modules/sso/service'
import { loadConfig } from '../../../src/config'
import type { Store } from '../../../src/db/store'

/**
 * The SSO service on each back end, against the real provider on loopback (its pages driven without
 * a browser): the account made, found again by issuer and subject after an email change, an existing
 * account matched by its verified email, a second subject with a linked email refused, and a refused
 * group that writes nothing. The browser flow: browser.test.ts.
 */
const PUBLIC_URL = 'http://127.0.0.1:7'
const REDIRECT = `${PUBLIC_URL}/signin/oidc/callback`
const people: Record<string, ProviderPerson> = {}
let provider: Awaited<ReturnType<typeof startOidcProvider>>

beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [REDIRECT], clientId: 'notesvc', clientSecret: 'a-secret-of-forty-characters-0123456789ab', people })
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
    const sso = createSsoService({ store, config: config.sso, issuer: provider.issuer, clientId: 'notesvc', clientSecret: 'a-secret-of-forty-characters-0123456789ab', publicUrl: PUBLIC_URL, accounts, audit, clock })
    /** a whole sign-in as `login` at the provider, and its outcome */
    async function signIn(login: string) {
      const begun = await sso.begin('/')
      if (!('url' in begun)) throw new Error(`begin refused: ${begun.ok ? '' : begun.message}`)
      const search = await signInAtProviderWithoutBrowser(begun.url, login, REDIRECT)
      return sso.finish(search, begun.flow, { ip: '127.0.0.1', userAgent: 'test' })
    }
    return { sso, accounts, signIn }
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
})
