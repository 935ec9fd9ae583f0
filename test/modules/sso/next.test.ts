import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createWebTestApp, type WebTestApp } from '../../helpers/web'
import { signInAtProviderWithoutBrowser, startOidcProvider } from '../../helpers/oidc-provider'
import { expectStaysOn, HONEST_NEXT, HOSTILE_NEXT } from '../../helpers/redirect-targets'
import { SSO_FLOW_COOKIE } from '../../../src/modules/sso'

/**
 * Where single sign-on sends the browser at its end (issue 29, item 3): `next=` given to the start
 * (GET /signin/oidc?next=…) is carried through the provider in the flow cookie and used by the
 * callback. Against a real OpenID Connect provider on loopback (its pages driven without a browser):
 * every hostile `next` ends on this site, also when the flow cookie is rewritten to carry it past the
 * start's check; honest ones are kept.
 */
const ORIGIN = 'http://localhost'
const CALLBACK = `${ORIGIN}/signin/oidc/callback`
const CLIENT = { id: 'notesvc', secret: 'a-secret-of-the-loopback-provider-0123456789' }

let provider: Awaited<ReturnType<typeof startOidcProvider>>
let t: WebTestApp
beforeAll(async () => {
  provider = await startOidcProvider({ redirectUris: [CALLBACK], clientId: CLIENT.id, clientSecret: CLIENT.secret, people: { ann: { email: 'ann@example.com', email_verified: true } } })
  t = createWebTestApp({ env: { NOTESVC_OIDC_ISSUER: provider.issuer, NOTESVC_OIDC_CLIENT_ID: CLIENT.id, NOTESVC_OIDC_CLIENT_SECRET: CLIENT.secret } })
})
afterAll(() => provider?.stop())

/** Starts single sign-on with `next`, signs in at the provider, and gives the callback's answer; `rewrite` may change the flow cookie first. */
async function signInThroughProvider(next: string, rewrite?: (flow: { next: string }) => void) {
  const b = t.browser()
  const start = await b.get(`/signin/oidc?next=${encodeURIComponent(next)}`)
  expect(start.status).toBe(303)
  if (rewrite) {
    const flow = JSON.parse(Buffer.from(b.jar.get(SSO_FLOW_COOKIE)!, 'base64url').toString())
    rewrite(flow)
    b.jar.set(SSO_FLOW_COOKIE, Buffer.from(JSON.stringify(flow)).toString('base64url'))
  }
  const search = await signInAtProviderWithoutBrowser(start.location!, 'ann', CALLBACK)
  const back = await b.get(`/signin/oidc/callback${search}`)
  expect(back.status).toBe(303)
  expect(back.cookies.join()).toContain('notesvc_session=')
  return back
}

describe('hostile next values: the callback sends the browser to this site', () => {
  test.each(HOSTILE_NEXT)('%s', async (kind, next) => {
    expectStaysOn((await signInThroughProvider(next)).location, ORIGIN, `${kind}: given to the start`)
    expectStaysOn((await signInThroughProvider('/settings', flow => { flow.next = next })).location, ORIGIN, `${kind}: written into the flow cookie`)
  })
})

describe('honest next values are kept', () => {
  test.each(HONEST_NEXT)('%p → %p', async (next, location) => {
    expect((await signInThroughProvider(next)).location).toBe(location)
  })
})
