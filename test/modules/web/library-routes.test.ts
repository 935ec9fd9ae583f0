import { describe, expect, test } from 'bun:test'
import { createWebTestApp, signedIn, webAppWithPassword } from '../../helpers/web'
import { byteRange, mediaType } from '../../../src/modules/web/library'

const EMAIL = 'lib@example.com'
const PASSWORD = 'a long enough passphrase'

/** Signed in to a fresh app, on the library page. */
const inLibrary = async () => signedIn(await webAppWithPassword(EMAIL, PASSWORD), EMAIL, PASSWORD, '/')

describe('the library pages', () => {
  test('signed out, / and a note page send to sign-in and back', async () => {
    const b = createWebTestApp().browser()
    expect((await b.get('/')).location).toBe('/signin?next=%2F')
    expect((await b.get('/notes/note_abc')).location).toBe('/signin?next=%2Fnotes%2Fnote_abc')
  })

  test('signed in: the shell with the balance, a strict CSP and the user escaped', async () => {
    const { page } = await inLibrary()
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toStartWith("default-src 'none'; script-src 'self'; style-src 'self';")
    expect(page.text).toContain('<span id="balance">60</span> credits')
    expect(page.text).toContain('<span class="who">lib@example.com</span>')
    expect(page.text).not.toMatch(/<script>|<style>| style="|onclick=/)
  })

  test('the script and style: versioned URLs are cached for good, others revalidated', async () => {
    const { b, page } = await inLibrary()
    const path = /src="(\/assets\/library\.js\?v=\w+)"/.exec(page.text)![1]!
    const versioned = await b.get(path)
    expect([versioned.status, versioned.headers.get('content-type'), versioned.headers.get('cache-control')]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable'])
    expect((await b.get('/assets/library.js?v=old')).headers.get('cache-control')).toBe('no-cache')
    expect((await b.get('/assets/library.css')).headers.get('content-type')).toBe('text/css; charset=utf-8')
  })

  test('recording lengths and recordings need the session (and its token for lengths)', async () => {
    const { b, csrf } = await inLibrary()
    expect((await b.get('/web/durations?ids=note_a')).status).toBe(401)
    const none = await b.get('/web/durations?ids=note_a,note_b', { 'x-csrf-token': csrf })
    expect([none.status, JSON.parse(none.text)]).toEqual([200, { durations: {} }])
    const tooMany = await b.get(`/web/durations?ids=${Array.from({ length: 101 }, (_, i) => `n${i}`).join(',')}`, { 'x-csrf-token': csrf })
    expect(tooMany.status).toBe(400)
    const missing = await b.get('/notes/note_nothing/media')
    expect([missing.status, JSON.parse(missing.text).error.code]).toEqual([404, 'not_found'])
    const signedOut = createWebTestApp().browser()
    expect((await signedOut.get('/notes/note_nothing/media')).status).toBe(401)
  })
})

describe('byte ranges of a 1000-byte recording', () => {
  test.each([
    [null, null],
    ['bytes=0-99', { start: 0, end: 99 }],
    ['bytes=900-', { start: 900, end: 999 }],
    ['bytes=-100', { start: 900, end: 999 }],
    ['bytes=990-5000', { start: 990, end: 999 }],
    ['bytes=1000-', 'bad'],
    ['bytes=50-10', 'bad'],
    ['bytes=-0', 'bad'],
    ['bytes=-', 'bad'],
    ['items=0-1', 'bad'],
  ] as const)('%p', (header, expected) => {
    expect(byteRange(header, 1000)).toEqual(expected as never)
  })
})

describe("the player's content type", () => {
  // createUpload checks only the type before any ';': what follows is never echoed into the header
  test.each([
    ['audio/mpeg', 'audio/mpeg'],
    ['audio/mp4; codecs="mp4a.40.2"', 'audio/mp4'],
    ['audio/mpeg;\nx-injected: 1', 'audio/mpeg'],
    ['Audio/WAV', 'audio/wav'],
    ['not a type', 'application/octet-stream'],
    ['', 'application/octet-stream'],
  ])('%j is served as %s', (stored, served) => {
    expect(mediaType(stored)).toBe(served)
    expect(() => new Response('', { headers: { 'content-type': mediaType(stored) } })).not.toThrow()
  })
})
