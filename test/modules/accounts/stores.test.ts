import { describe, expect, test } from 'bun:test'
import { backEnds } from '../../helpers/backends'
import { identityServices } from '../../helpers/identity'
import { closedAfterAll } from '../../helpers/closing'

/** Accounts and API keys on each store: the accounts service over a fresh store, as createServices builds it. */

const opened = closedAfterAll()

for (const b of backEnds) describe.skipIf(b.skip)(`accounts on ${b.name}`, () => {
  async function identity() {
    const store = await b.open()
    opened.push(store)
    const { clock, accounts } = identityServices(store)
    return { store, clock, accounts }
  }

  test('accounts are one per email whatever its ASCII case; keys are listed, verified, touched and revoked', async () => {
    const { store, clock, accounts } = await identity()
    expect(await accounts.isEmpty()).toBe(true)
    const live = await accounts.createKey({ email: 'Ada@Example.com', name: 'laptop', scopes: ['notes:read'] })
    const sandbox = await accounts.createKey({ email: 'ada@example.com', sandbox: true })
    expect(await accounts.isEmpty()).toBe(false)
    expect(sandbox.account.id).toBe(live.account.id)
    expect((await accounts.requireAccount('ADA@EXAMPLE.COM')).email).toBe('Ada@Example.com')
    expect((await accounts.listKeys('ada@example.com')).map(k => [k.name, k.sandbox, k.scopes])).toEqual([['laptop', false, ['notes:read']], [null, true, sandbox.info.scopes]])

    const principal = await accounts.verifyApiKey(live.key)
    expect(principal).toMatchObject({ accountId: live.account.id, sandbox: false, credentialId: live.info.id, source: 'api_key' })
    expect([...principal!.scopes]).toEqual(['notes:read'])
    expect((await store.get<{ last_used_at: string }>('SELECT last_used_at FROM api_keys WHERE id = ?', [live.info.id]))!.last_used_at).toBe(clock.now().toISOString())
    expect(await accounts.verifyApiKey(live.key.slice(0, -1) + (live.key.endsWith('A') ? 'B' : 'A'))).toBeNull()

    expect((await accounts.revokeKey(live.info.start)).revokedAt).toBe(clock.now().toISOString())
    expect(await accounts.verifyApiKey(live.key)).toBeNull()
    expect(await accounts.verifyApiKey(sandbox.key)).toMatchObject({ sandbox: true })
    expect(await accounts.revokeKeyOf('acct_someone_else', sandbox.info.id)).toBeNull()
    expect((await accounts.revokeKeyOf(live.account.id, sandbox.info.id))!.revokedAt).not.toBeNull()
  })

  test('plans and prepaid credits through the accounts service', async () => {
    const { accounts } = await identity()
    await accounts.ensureAccount('bob@example.com')
    expect((await accounts.setPlan('BOB@example.com', 'pro')).plan).toBe('pro')
    expect((await accounts.addPurchasedCredits('bob@example.com', 12)).purchased_credits).toBe(12)
    await expect(accounts.setPlan('nobody@example.com', 'pro')).rejects.toThrow('no account with email nobody@example.com')
  })

  test('the account an old ID-token link (accounts.oidc_subject) names, for the sso module\'s linking rule', async () => {
    const { store, accounts } = await identity()
    const carol = await accounts.ensureAccount('carol@example.com')
    expect(await accounts.accountOfOidcSubject('sub-1')).toBeNull()
    await store.run('UPDATE accounts SET oidc_subject = ? WHERE id = ?', ['sub-1', carol.id])
    expect((await accounts.accountOfOidcSubject('sub-1'))?.id).toBe(carol.id)
    expect(await accounts.accountOfOidcSubject('sub-2')).toBeNull()
  })
})
