import { identityServices } from '../../helpers/identity'
import { describe, expect, test } from 'bun:test'
import { createOAuthService, OAuthError } from '../../../src/modules/oauth'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import { approvedCode, REDIRECT } from '../../helpers/oauth'

/**
 * The authorization server's state (clients, codes, token families) on each store: the service over a
 * fresh store, driven directly. The HTTP flow itself is tested in flow.test.ts and refusals.test.ts.
 */

const opened = closedAfterAll()

/** The OAuth error a call ends in, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p
    return 'ok'
  } catch (err) {
    if (err instanceof OAuthError) return err.error
    throw err
  }
}

for (const b of backEnds) describe.skipIf(b.skip)(`OAuth state on ${b.name}`, () => {
  async function server() {
    const store = await b.open()
    opened.push(store)
    const { clock, ids, accounts } = identityServices(store)
    const oauth = createOAuthService({ store, clock, ids, config: { publicUrl: 'http://localhost' } })
    const account = await accounts.ensureAccount('oauth@example.com')
    const client = await oauth.register({ client_name: 'Store test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })

    /** A code for `scope` approved by the account, and the verifier that redeems it. */
    const code = (scope = 'notes:read notes:write') => approvedCode(oauth, client.client_id, account.id, scope)
    const redeem = (c: { value: string; verifier: string }) =>
      oauth.token(new URLSearchParams({ grant_type: 'authorization_code', code: c.value, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: c.verifier }), null)
    const refresh = (token: string, scope?: string) =>
      oauth.token(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: client.client_id, ...(scope ? { scope } : {}) }), null)
    return { clock, oauth, account, client, code, redeem, refresh }
  }

  test('a code gives tokens once; the access token is a principal until it expires; a replayed code revokes its tokens', async () => {
    const s = await server()
    const c = await s.code()
    const tokens = await s.redeem(c)
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'notes:read notes:write' })
    const principal = await s.oauth.verifyAccessToken(tokens.access_token)
    expect(principal).toMatchObject({ accountId: s.account.id, sandbox: false, source: 'oauth' })
    expect([...principal!.scopes].sort()).toEqual(['notes:read', 'notes:write'])

    expect(await outcome(s.redeem(c))).toBe('invalid_grant')
    expect(await s.oauth.verifyAccessToken(tokens.access_token)).toBeNull()
    expect(await outcome(s.refresh(tokens.refresh_token))).toBe('invalid_grant')

    const later = await s.redeem(await s.code())
    s.clock.advance(3601 * 1000)
    expect(await s.oauth.verifyAccessToken(later.access_token)).toBeNull()
  })

  test('refresh tokens rotate; a narrower scope is allowed, a wider one not; reuse revokes the family', async () => {
    const s = await server()
    const first = await s.redeem(await s.code())
    expect(await outcome(s.refresh(first.refresh_token, 'notes:read folders:read'))).toBe('invalid_scope')
    const second = await s.refresh(first.refresh_token, 'notes:read')
    expect(second.scope).toBe('notes:read')
    expect([...(await s.oauth.verifyAccessToken(second.access_token))!.scopes]).toEqual(['notes:read'])
    // the old refresh token again: theft assumed, the whole family goes
    expect(await outcome(s.refresh(first.refresh_token))).toBe('invalid_grant')
    expect(await s.oauth.verifyAccessToken(second.access_token)).toBeNull()
    expect(await outcome(s.refresh(second.refresh_token))).toBe('invalid_grant')
  })

  test('one code redeemed at once several times gives tokens exactly once', async () => {
    const s = await server()
    const c = await s.code()
    const results = await Promise.all(Array.from({ length: 4 }, () => outcome(s.redeem(c))))
    expect(results.sort()).toEqual(['invalid_grant', 'invalid_grant', 'invalid_grant', 'ok'])
  })

  test('revocation: an access token alone, a refresh token with its family', async () => {
    const s = await server()
    const a = await s.redeem(await s.code())
    const b2 = await s.redeem(await s.code())
    await s.oauth.revoke(new URLSearchParams({ token: a.access_token, client_id: s.client.client_id }), null)
    expect(await s.oauth.verifyAccessToken(a.access_token)).toBeNull()
    expect((await s.refresh(a.refresh_token)).token_type).toBe('Bearer')
    await s.oauth.revoke(new URLSearchParams({ token: b2.refresh_token, client_id: s.client.client_id }), null)
    expect(await s.oauth.verifyAccessToken(b2.access_token)).toBeNull()
    expect(await outcome(s.refresh(b2.refresh_token))).toBe('invalid_grant')
  })
})
