import { describe, expect, test } from 'bun:test'
import { field, signedIn, webAppWithPassword } from '../../helpers/web'
import { makeWav } from '../../fixtures/wav'

/** The settings page's Activity section and the events of the browser's own routes (the player, the download). */

const EMAIL = 'owner@example.com'
const PASSWORD = 'a long enough passphrase'

describe('the audit log in the browser', () => {
  test("a recording played is one event, not one per range the player seeks to; another account's note is none", async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const key = await t.key({ email: EMAIL })
    const wav = makeWav({ seconds: 1 })
    const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'call.wav', contentType: 'audio/wav', fileSize: wav.length } })
    expect((await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit }))).status).toBe(200)
    const { b } = await signedIn(t, EMAIL, PASSWORD, '/')
    const media = `/notes/${up.body.noteId}/media`
    expect((await b.get(media, { range: 'bytes=0-' })).status).toBe(206)
    expect((await b.get(media, { range: 'bytes=2000-' })).status).toBe(206)
    expect((await b.get(media, { range: 'bytes=4000-4100' })).status).toBe(206)
    expect((await b.get(media)).status).toBe(200)
    // a note that is not there (or another account's): 404, and nothing recorded
    expect((await b.get(`/notes/note_01jd6x3m2k8v4n7p9q2r5s8t0w/media`)).status).toBe(404)
    const played = (await t.call('GET', '/v1/audit-events?action=note.media_read', { token: key })).body.data
    // the read from byte 0 and the whole read: two playings, counted in one event (the same read within
    // ten minutes); the two seeks are not counted
    expect(played.map((e: any) => [e.actor.type, e.target.id, e.count])).toEqual([['user', up.body.noteId, 2]])
    // the Activity section says how many times
    const page = await b.get('/settings')
    expect(page.text).toContain(`<tr data-action="note.media_read" data-count="2">\n<td>Recording played, 2 times<br><code class="muted">${up.body.noteId}</code></td>`)
    expect(page.text).toContain('<br><span class="muted">last <time datetime=')
  })

  test('the Activity section lists the latest events with what a browser sent escaped, and the download link works', async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const b = t.browser()
    const form = await b.get('/signin')
    const hostile = '<script>alert("ua")</script>'
    const r = await b.post('/signin', { csrf: field(form.text, 'csrf')!, next: '/settings', email: EMAIL, password: PASSWORD }, { 'user-agent': hostile })
    expect(r.status).toBe(303)
    const page = await b.get('/settings')
    expect(page.text).toContain('<section id="activity">')
    expect(page.text).toContain('Signed in')
    expect(page.text).toContain('&lt;script&gt;alert(&quot;ua&quot;)&lt;/script&gt;')
    expect(page.text).not.toContain(hostile)
    expect(page.text).toContain('<a href="/settings/audit-events.jsonl" download>Download all (JSON lines)</a>')

    const download = await b.get('/settings/audit-events.jsonl')
    expect(download.status).toBe(200)
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-acct_\w+\.jsonl"$/)
    const actions = download.text.trimEnd().split('\n').map(l => JSON.parse(l).action)
    expect(actions).toEqual(['account.created', 'signin.succeeded', 'audit.exported'])
    // signed out, the download sends to sign-in
    const signedOut = t.browser()
    expect((await signedOut.get('/settings/audit-events.jsonl')).location).toBe('/signin?next=%2Fsettings')
  })
})
