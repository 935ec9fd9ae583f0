import { beforeAll, describe, expect, test } from 'bun:test'
import { field, webAppWithPassword, type WebTestApp } from '../../helpers/web'
import { expectStaysOn, HONEST_NEXT, HOSTILE_NEXT, refusedAsText } from '../../helpers/redirect-targets'

/**
 * Where the browser goes after the password sign-in (issue 29, item 3): `next=` is resolved, checked
 * and used as one value, so no `next` an attacker puts in a link sends a signed-in person to another
 * site, along every way a `next` reaches the sign-in: the form's hidden field (from GET /signin?next=),
 * a form posted with any `next`, and GET /signin with a session already open.
 */
const ORIGIN = 'http://localhost'
const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'

let t: WebTestApp
beforeAll(async () => {
  t = await webAppWithPassword(EMAIL, PASSWORD)
})

describe('hostile next values: the Location after signing in stays on this site', () => {
  test.each(HOSTILE_NEXT)('%s', async (kind, next) => {
    // a form posted with the hostile value itself
    const b = t.browser()
    const blank = await b.get('/signin')
    const posted = await b.post('/signin', { csrf: field(blank.text, 'csrf')!, next, email: EMAIL, password: PASSWORD })
    if (refusedAsText(next)) {
      // a form field holding NUL is refused before anything else: no sign-in, no redirect
      expect({ status: posted.status, location: posted.location }).toEqual({ status: 400, location: null })
      await b.signIn(EMAIL, PASSWORD)
    } else {
      expect(posted.status).toBe(303)
      expectStaysOn(posted.location, ORIGIN, `${kind}: posted next`)
    }
    // already signed in: GET /signin sends the browser straight on
    const signedIn = await b.get(`/signin?next=${encodeURIComponent(next)}`)
    expect(signedIn.status).toBe(303)
    expectStaysOn(signedIn.location, ORIGIN, `${kind}: GET /signin with a session`)
    // the form as GET /signin?next= gives it
    const fresh = t.browser()
    const page = await fresh.get(`/signin?next=${encodeURIComponent(next)}`)
    expect(page.status).toBe(200)
    const carried = field(page.text, 'next')!
    const viaForm = await fresh.post('/signin', { csrf: field(page.text, 'csrf')!, next: carried, email: EMAIL, password: PASSWORD })
    expect(viaForm.status).toBe(303)
    expectStaysOn(viaForm.location, ORIGIN, `${kind}: the form's next (${JSON.stringify(carried)})`)
  })
})

describe('honest next values are kept', () => {
  test.each(HONEST_NEXT)('%p → %p', async (next, location) => {
    const b = t.browser()
    const r = await b.signIn(EMAIL, PASSWORD, next)
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location })
    const again = await b.get(`/signin?next=${encodeURIComponent(next)}`)
    expect({ status: again.status, location: again.location }).toEqual({ status: 303, location })
  })

  test('no next: the settings page', async () => {
    const r = await t.browser().signIn(EMAIL, PASSWORD)
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: '/settings' })
  })
})
