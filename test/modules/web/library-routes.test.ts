import { describe, expect, test } from 'bun:test'
import { createWebTestApp, signedIn, webAppWithPassword } from '../../helpers/web'
import { makeWav } from '../../fixtures/wav'
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

  test('a note page offers Share… unless the instance turned sharing off', async () => {
    const on = await signedIn(await webAppWithPassword(EMAIL, PASSWORD), EMAIL, PASSWORD, '/notes/note_abc')
    expect(on.page.text).toContain('<details id="share"')
    const off = await signedIn(await webAppWithPassword(EMAIL, PASSWORD, { env: { NOTESVC_SHARING: 'off' } }), EMAIL, PASSWORD, '/notes/note_abc')
    expect(off.page.status).toBe(200)
    expect(off.page.text).toContain('id="segments"')
    expect(off.page.text).not.toContain('id="share')
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

describe("another account's note, asked for by a signed-in user", () => {
  const OWNER = 'owner@example.com'
  const OTHER = 'other@example.com'
  const TITLE = 'Acquisition of Northwind, board only'

  /** A's note with its recording uploaded (not processed), and B signed in to the library. */
  async function twoAccounts() {
    const t = await webAppWithPassword(OWNER, PASSWORD)
    await t.web().setPassword(OTHER, PASSWORD)
    const ownerKey = await t.key({ email: OWNER })
    const wav = makeWav({ seconds: 1 })
    const up = await t.call('POST', '/v1/uploads', { token: ownerKey, body: { fileName: `${TITLE}.wav`, contentType: 'audio/wav', fileSize: wav.length } })
    expect(up.status).toBe(201)
    const put = await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit }))
    expect(put.status).toBe(200)
    const noteId: string = up.body.noteId
    expect((await t.call('GET', `/v1/notes/${noteId}`, { token: ownerKey })).body.title).toBe(TITLE)
    // an id of the same shape that names no note
    const unknownId = noteId.slice(0, -1) + (noteId.endsWith('a') ? 'b' : 'a')
    return { t, noteId, unknownId, wav, other: await signedIn(t, OTHER, PASSWORD, '/'), owner: await signedIn(t, OWNER, PASSWORD, '/') }
  }

  /** a response with the note's id put back to a placeholder, to compare one for A's note with one for an unknown id */
  const asSeen = (r: { status: number; text: string; headers: Headers }, id: string) => ({
    status: r.status, contentType: r.headers.get('content-type'), text: r.text.replaceAll(id, '{id}'),
  })

  test("the note page: B gets for A's note exactly what an unknown id gets, without A's title", async () => {
    const { noteId, unknownId, other } = await twoAccounts()
    const page = await other.b.get(`/notes/${noteId}`)
    expect(asSeen(page, noteId)).toEqual(asSeen(await other.b.get(`/notes/${unknownId}`), unknownId))
    expect(page.text).not.toContain('Northwind')
    // what the page's script then asks for, as the session: 404 as for an unknown id, no title
    const api = (id: string) => other.b.get(`/v1/notes/${id}`, { 'x-csrf-token': other.csrf })
    const note = await api(noteId)
    expect([note.status, JSON.parse(note.text).error.code]).toEqual([404, 'not_found'])
    expect(note.text).not.toContain('Northwind')
    expect(JSON.parse(note.text).error.message.replaceAll(noteId, '{id}')).toBe(JSON.parse((await api(unknownId)).text).error.message.replaceAll(unknownId, '{id}'))
  })

  test("the recording: 404 for B as for an unknown id, in either library; A plays it", async () => {
    const { noteId, unknownId, wav, other, owner } = await twoAccounts()
    for (const query of ['', '?library=sandbox']) {
      const media = await other.b.get(`/notes/${noteId}/media${query}`)
      expect(media.status).toBe(404)
      expect(JSON.parse(media.text).error.code).toBe('not_found')
      const unknown = await other.b.get(`/notes/${unknownId}/media${query}`)
      expect({ ...asSeen(media, noteId), text: JSON.parse(asSeen(media, noteId).text).error.message }).toEqual({ ...asSeen(unknown, unknownId), text: JSON.parse(asSeen(unknown, unknownId).text).error.message })
      expect(media.text).not.toContain('Northwind')
    }
    // the recording is there: its owner gets it, whole
    const mine = await owner.b.get(`/notes/${noteId}/media`)
    expect([mine.status, mine.headers.get('content-type'), mine.headers.get('content-length')]).toEqual([200, 'audio/wav', String(wav.length)])
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
