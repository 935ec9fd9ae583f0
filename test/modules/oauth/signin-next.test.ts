import { beforeAll, describe, expect, test } from 'bun:test'
import { oauth, oauthApp, REDIRECT } from '../../helpers/oauth'
import { cookieBrowser, field } from '../../helpers/web'
import { expectStaysOn, HOSTILE_NEXT, refusedAsText } from '../../helpers/redirect-targets'

/**
 * The authorization page's way through the sign-in (issue 29, item 3): a browser without a session
 * is sent to /signin?next=/oauth/authorize?… with the request's fields, and after the password
 * sign-in back to that page. Whatever the fields hold (every hostile `next` of the table as the
 * state), the way back stays on this site; an honest request comes back whole.
 */
const ORIGIN = 'http://localhost'
const EMAIL = 'user@example.com'
const PASSWORD = 'correct horse battery staple'

let t: ReturnType<typeof oauthApp>
let request: Record<string, string>
beforeAll(async () => {
  t = oauthApp()
  await t.services.web.setPassword(EMAIL, PASSWORD)
  const reg = await t.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
  request = {
    client_id: reg.body.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'notes:read',
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()), code_challenge_method: 'S256',
  }
})

/** The authorization request with `state`, from a browser without a session, through the sign-in: where the browser is sent. */
async function throughSignIn(state: string): Promise<string | null> {
  const authorize = t.authorizeUrl({ ...request, state })
  const b = cookieBrowser(ORIGIN, r => t.app.handle(r))
  const toSignIn = await b.get(authorize)
  if (refusedAsText(state)) {
    // the authorization request's own fields are refused with NUL in them: no detour, no redirect
    expect({ status: toSignIn.status, location: toSignIn.location }).toEqual({ status: 400, location: null })
    return null
  }
  expect(toSignIn.status).toBe(303)
  expect(toSignIn.location).toStartWith('/signin?next=')
  const page = await b.get(toSignIn.location!)
  const signedIn = await b.post('/signin', { csrf: field(page.text, 'csrf')!, next: field(page.text, 'next')!, email: EMAIL, password: PASSWORD })
  expect(signedIn.status).toBe(303)
  return signedIn.location
}

describe('the sign-in on the way to the authorization page', () => {
  test.each(HOSTILE_NEXT.filter(([, v]) => v.length < 1000))('a state that is %s: back on this site', async (kind, state) => {
    const location = await throughSignIn(state)
    if (!refusedAsText(state)) expectStaysOn(location, ORIGIN, kind)
  })

  test('an honest request comes back to the authorization page whole', async () => {
    const back = new URL((await throughSignIn('xyz'))!, ORIGIN)
    expect(back.origin + back.pathname).toBe(`${ORIGIN}/oauth/authorize`)
    expect(Object.fromEntries(back.searchParams)).toEqual({ ...request, state: 'xyz' })
  })
})
