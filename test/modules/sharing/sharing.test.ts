/**
 * Share links through the API and their page, on both back ends: made, listed with their openings,
 * revoked; the page without a session (what it shows as chosen, its headers, its recording by byte
 * ranges, its downloads); every link that does not open (unknown, revoked, expired, note deleted by
 * retention, sharing off) the same 404 bytes; the passphrase and its limit; the owner's audit log.
 */
import { describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope, fixedClock } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { finishedNoteWithRecording, MEETING } from '../../helpers/shared-note'

const ALL = { showSummary: true, showSpeakers: true, showRecording: true, formats: ['txt', 'srt', 'vtt'] }
/** an unknown token of the right shape (43 base64url characters) */
const UNKNOWN = '/s/' + 'A'.repeat(43)

for (const b of backEnds) describe.skipIf(b.skip)(`share links on ${b.name}`, () => {
  const open = closingAfterEach(b)

  async function setup(env: Record<string, string> = {}) {
    const clock = fixedClock('2026-11-01T10:00:00.000Z')
    const t = createTestApp({ clock, store: await open(), env })
    const key = await t.key({ email: 'owner@example.com' })
    const { noteId, wav } = await finishedNoteWithRecording(t, key)
    const share = async (body: Record<string, unknown> = ALL) => {
      const r = await t.call('POST', `/v1/notes/${noteId}/shares`, { token: key, body })
      expect(r.status).toBe(201)
      return { ...r.body, path: new URL(r.body.url).pathname as string }
    }
    return { t, clock, key, noteId, wav, share }
  }

  test('a link shows the transcript with speakers and times, the summary, the player and downloads, to no one signed in', async () => {
    const { t, share, wav } = await setup()
    const s = await share()
    expect(s.url).toMatch(/^http:\/\/localhost\/s\/[A-Za-z0-9_-]{43}$/)
    const page = await t.call('GET', s.path)
    expect(page.status).toBe(200)
    for (const shown of [MEETING.title, MEETING.summary, 'Alice Marsh', 'Bob Okafor', ...MEETING.segments.map(x => x.text), '0:02', '0:05']) expect(page.text).toContain(shown)
    expect(page.text).toContain(`<audio id="player" controls preload="metadata" src="${s.path}/media">`)
    expect(page.headers.get('x-robots-tag')).toContain('noindex')
    expect(page.text).toContain('<meta name="robots" content="noindex')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'; script-src 'self'; style-src 'self'; media-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
    expect(page.headers.get('set-cookie')).toBeNull()
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)/) // no inline script
    expect(page.text).not.toContain('href="/"') // no way into the library
    // the recording through the link, by byte ranges (seeking)
    const part = await t.call('GET', `${s.path}/media`, { headers: { range: 'bytes=1000-1999' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${wav.length}`)
    const bytes = new Uint8Array(await (await t.app.handle(new Request(`http://localhost${s.path}/media`, { headers: { range: 'bytes=1000-1999' } }))).arrayBuffer())
    expect(bytes).toEqual(wav.slice(1000, 2000))
    const srt = await t.call('GET', `${s.path}/transcript.srt`)
    expect(srt.status).toBe(200)
    expect(srt.text).toContain('00:00:02,500 --> 00:00:05,000\nBob Okafor: The export feature')
    expect(srt.headers.get('content-disposition')).toContain('Quarterly planning with Northwind.srt')
  })

  test('a page opened again after its note changed shows the change (title, a speaker named, the recording removed)', async () => {
    const { t, key, noteId, share, clock } = await setup()
    const s = await share()
    expect((await t.call('GET', s.path)).text).toContain(MEETING.title)
    expect((await t.call('PATCH', `/v1/notes/${noteId}`, { token: key, body: { title: 'Renamed <after> sharing' } })).status).toBe(200)
    const renamed = await t.call('GET', s.path)
    expect(renamed.text).toContain('Renamed &lt;after&gt; sharing')
    expect(renamed.text).not.toContain(MEETING.title)
    expect((await t.call('PATCH', `/v1/notes/${noteId}/speakers/B`, { token: key, body: { name: 'Roberta Okafor' } })).status).toBe(200)
    expect((await t.call('GET', s.path)).text).toContain('Roberta Okafor')
    expect((await t.call('GET', s.path)).text).toContain('<audio')
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'media', days: 1 } })
    clock.set('2026-11-03T10:00:00.000Z')
    await t.services.retention.sweep()
    expect((await t.call('GET', s.path)).text).not.toContain('<audio')
  })

  test('what the owner did not choose is not shown nor served', async () => {
    const { t, share } = await setup()
    const s = await share({})
    const page = await t.call('GET', s.path)
    expect(page.status).toBe(200)
    expect(page.text).toContain(MEETING.segments[1]!.text)
    for (const hidden of [MEETING.summary, 'Alice Marsh', 'Bob Okafor', '<audio', 'download']) expect(page.text).not.toContain(hidden)
    expect(page.text).toContain('Speaker A')
    expect((await t.call('GET', `${s.path}/media`)).status).toBe(404)
    expect((await t.call('GET', `${s.path}/transcript.txt`)).status).toBe(404)
    const txtOnly = await share({ formats: ['txt'] })
    const txt = await t.call('GET', `${txtOnly.path}/transcript.txt`)
    expect(txt.status).toBe(200)
    expect(txt.text).not.toContain('Alice')
    expect((await t.call('GET', `${txtOnly.path}/transcript.srt`)).status).toBe(404)
  })

  test('the owner lists links with their openings, never a token; the token is kept only as its hash', async () => {
    const { t, key, noteId, share, clock } = await setup()
    const s = await share()
    await t.call('GET', s.path)
    clock.advance(60_000)
    await t.call('GET', s.path)
    const list = await t.call('GET', `/v1/notes/${noteId}/shares`, { token: key })
    expect(list.status).toBe(200)
    expect(list.body.data).toEqual([{ id: s.id, noteId, showSummary: true, showSpeakers: true, showRecording: true, formats: ['txt', 'srt', 'vtt'], expiresAt: null, hasPassphrase: false, createdAt: '2026-11-01T10:00:00.000Z', revokedAt: null, openCount: 2, lastOpenedAt: '2026-11-01T10:01:00.000Z' }])
    const token = s.path.slice(3)
    expect(list.text).not.toContain(token)
    const stored = JSON.stringify(await t.store.all('SELECT * FROM note_shares'))
    expect(stored).not.toContain(token)
    expect(stored).toContain(new Bun.CryptoHasher('sha256').update(token).digest('hex'))
  })

  test('opening writes share.opened to the owner\'s audit log, by the link, with the address', async () => {
    const { t, key, noteId, share } = await setup()
    const s = await share()
    await t.call('GET', s.path, { headers: { 'user-agent': 'colleague-browser/1' } })
    const events = await t.call('GET', '/v1/audit-events?action=share.opened', { token: key })
    expect(events.status).toBe(200)
    expect(events.body.data).toHaveLength(1)
    expect(events.body.data[0]).toMatchObject({ action: 'share.opened', actor: { type: 'share', id: s.id }, target: { type: 'note', id: noteId }, userAgent: 'colleague-browser/1', details: { shareId: s.id, sandbox: false } })
    expect(JSON.stringify(events.body)).not.toContain(s.path.slice(3))
  })

  test('unknown, revoked, expired, note deleted by retention, sharing off: the same 404 bytes', async () => {
    const { t, key, noteId, share, clock } = await setup()
    const unknown = await t.call('GET', UNKNOWN)
    expect(unknown.status).toBe(404)
    expect(unknown.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(unknown.headers.get('referrer-policy')).toBe('no-referrer')
    const same = async (path: string) => {
      const r = await t.call('GET', path)
      expect([r.status, r.text]).toEqual([404, unknown.text])
    }
    await same('/s/short')

    const revoked = await share()
    const expiring = await share({ ...ALL, expiresAt: '2026-11-01T11:00:00.000Z' })
    const off = await share()
    expect((await t.call('GET', revoked.path)).status).toBe(200)
    expect((await t.call('DELETE', `/v1/notes/${noteId}/shares/${revoked.id}`, { token: key })).status).toBe(204)
    await same(revoked.path)
    await same(`${revoked.path}/media`)
    await same(`${revoked.path}/transcript.txt`)
    expect((await t.call('GET', `/v1/notes/${noteId}/shares`, { token: key })).body.data.find((x: { id: string }) => x.id === revoked.id).revokedAt).toBe('2026-11-01T10:00:00.000Z')

    expect((await t.call('GET', expiring.path)).status).toBe(200)
    clock.set('2026-11-01T11:00:00.000Z')
    await same(expiring.path)

    const disabled = createTestApp({ clock, store: t.store, env: { NOTESVC_SHARING: 'off' } })
    const d = await disabled.call('GET', off.path)
    expect([d.status, d.text]).toEqual([404, unknown.text])
    expectEnvelope(await disabled.call('POST', `/v1/notes/${noteId}/shares`, { token: key, body: {} }), 403, 'sharing_disabled')

    expect((await t.call('GET', off.path)).status).toBe(200)
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'notes', days: 1 } })
    clock.set('2026-11-03T10:00:00.000Z')
    await t.services.retention.sweep()
    await same(off.path)
  })

  test('retention removing the recording: the page without the player, with the usual message', async () => {
    const { t, key, share, clock } = await setup()
    const s = await share()
    await t.call('PATCH', '/v1/settings/retention', { token: key, body: { mode: 'media', days: 1 } })
    clock.set('2026-11-03T10:00:00.000Z')
    expect(await t.services.retention.sweep()).toMatchObject({ recordingsRemoved: 1 })
    const page = await t.call('GET', s.path)
    expect(page.status).toBe(200)
    expect(page.text).not.toContain('<audio')
    expect(page.text).toContain('The recording was removed by the retention policy on 2026-11-03. The transcript and summary are kept.')
    expect(page.text).toContain(MEETING.segments[0]!.text)
    expect((await t.call('GET', `${s.path}/media`)).status).toBe(404)
  })

  test('a passphrase: asked first, wrong ones refused then limited with Retry-After, the right one opens the page and its recording', async () => {
    const { t, share } = await setup()
    const s = await share({ ...ALL, passphrase: 'correct horse' })
    expect(s.hasPassphrase).toBe(true)
    const ask = await t.call('GET', s.path)
    expect(ask.status).toBe(401)
    expect(ask.text).toContain('Passphrase needed')
    expect(ask.text).not.toContain(MEETING.title)
    expect((await t.call('GET', `${s.path}/media`)).status).toBe(404)
    const post = (passphrase: string) => t.call('POST', s.path, { body: new URLSearchParams({ passphrase }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    for (let i = 0; i < 5; i++) {
      const wrong = await post(`guess ${i}`)
      expect(wrong.status).toBe(401)
      expect(wrong.text).toContain('That passphrase is not right')
    }
    const limited = await post('correct horse')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.text).toContain('Too many wrong passphrases')

    const other = await share({ ...ALL, passphrase: 'battery staple' })
    const right = await t.call('POST', other.path, { body: 'passphrase=battery+staple', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(right.status).toBe(303)
    expect(right.headers.get('set-cookie')).toBeNull()
    const location = right.headers.get('location')!
    expect(location).toStartWith(`${other.path}?k=`)
    const page = await t.call('GET', location)
    expect(page.status).toBe(200)
    expect(page.text).toContain(MEETING.summary)
    const k = location.slice(location.indexOf('?'))
    expect(page.text).toContain(`src="${other.path}/media${k}"`)
    expect((await t.call('GET', `${other.path}/media${k}`, { headers: { range: 'bytes=0-99' } })).status).toBe(206)
    // the proof is of this link only
    expect((await t.call('GET', `${s.path}${k}`)).status).toBe(401)
  })

  test('wrong passphrases sent all at once are limited like ones sent in turn; a link without one counts none; anything else under /s/ is the same 404 page', async () => {
    const { t, share } = await setup()
    const s = await share({ ...ALL, passphrase: 'correct horse' })
    const post = (path: string, body: string) => t.call('POST', path, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    // 11 wrong and the right one last, sent together: the link allows 5 tries a window
    const burst = await Promise.all([...Array.from({ length: 11 }, (_, i) => `passphrase=guess+${i}`), 'passphrase=correct+horse'].map(b => post(s.path, b)))
    const statuses = burst.map(r => r.status)
    // at most 5 wrong ones checked (a right one among the first five is taken back, which may let one
    // more in, depending on which lookups end first); the rest refused with 429
    expect(statuses.filter(x => x === 401).length).toBeLessThanOrEqual(5)
    expect(statuses.filter(x => x === 429).length).toBeGreaterThanOrEqual(6)

    // a link with no passphrase: a POST goes back to its page and takes nothing from anyone's tries
    const open = await share()
    for (let i = 0; i < 25; i++) {
      const r = await post(open.path, 'passphrase=x')
      expect([r.status, r.headers.get('location')]).toEqual([303, open.path])
    }
    const second = await share({ ...ALL, passphrase: 'battery staple' })
    // a form far too large is a wrong try answered by the page, not the API's 413 JSON
    const huge = await post(second.path, `passphrase=${'a'.repeat(100_000)}`)
    expect(huge.status).toBe(401)
    expect(huge.text).toContain('That passphrase is not right')
    expect((await post(second.path, 'passphrase=battery+staple')).status).toBe(303)

    const unknown = await t.call('GET', UNKNOWN)
    for (const [method, path] of [['GET', `${s.path}/a/b`], ['PUT', s.path], ['DELETE', s.path], ['OPTIONS', s.path], ['POST', `${s.path}/media`], ['GET', '/s/'], ['GET', '/s']] as const) {
      const r = await t.call(method, path)
      expect([method, path, r.status, r.text]).toEqual([method, path, 404, unknown.text])
      expect(r.headers.get('x-robots-tag')).toContain('noindex')
      expect(r.headers.get('referrer-policy')).toBe('no-referrer')
    }
  })

  test('another account\'s note or link: 404; bad input: 400 that says what to send', async () => {
    const { t, key, noteId, share } = await setup()
    const s = await share()
    const other = await t.key({ email: 'other@example.com' })
    expectEnvelope(await t.call('POST', `/v1/notes/${noteId}/shares`, { token: other, body: {} }), 404, 'not_found')
    expectEnvelope(await t.call('GET', `/v1/notes/${noteId}/shares`, { token: other }), 404, 'not_found')
    expectEnvelope(await t.call('DELETE', `/v1/notes/${noteId}/shares/${s.id}`, { token: other }), 404, 'not_found')
    expect((await t.call('GET', s.path)).status).toBe(200)
    expectEnvelope(await t.call('DELETE', `/v1/notes/${noteId}/shares/shr_nothing`, { token: key }), 404, 'not_found')
    for (const body of [{ expiresAt: '2026-10-01T00:00:00Z' }, { expiresAt: 'tomorrow' }, { passphrase: 'abc' }, { formats: ['docx'] }, { formats: ['txt', 'txt'] }, { showSummary: 'yes' }, { token: 'x' }]) {
      const r = await t.call('POST', `/v1/notes/${noteId}/shares`, { token: key, body })
      expectEnvelope(r, 400, 'invalid_request')
      expect(r.body.error.details?.length ?? 0).toBeGreaterThan(0)
    }
  })
})
