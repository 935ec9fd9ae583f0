/**
 * The settings page's Retention section: the policy in effect, the form that changes it (a bad value
 * answered 400 with the page saying what to give), and the player's route of a note whose recording
 * the policy removed.
 */
import { describe, expect, test } from 'bun:test'
import { fixedClock } from '../../helpers/app'
import { signedIn, webAppWithPassword } from '../../helpers/web'

const EMAIL = 'owner@example.com'
const PASSWORD = 'correct horse battery staple'

const checked = (html: string) => /<input type="radio" name="mode" value="([a-z]+)" checked>/.exec(html)?.[1]
const effective = (html: string) => /<strong id="retention-effective">([^<]*)<\/strong>/.exec(html)?.[1]

describe('the Retention section of /settings', () => {
  test('shows the server default, changes through the form, and a bad number of days is refused with what to give', async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const { b, page, csrf } = await signedIn(t, EMAIL, PASSWORD)
    expect(effective(page.text)).toBe('keep everything forever')
    expect(checked(page.text)).toBe('default')

    for (const [days, status] of [['', 400], ['0', 400], ['ten', 400], ['36501', 400]] as const) {
      const bad = await b.post('/settings/retention', { csrf, mode: 'media', days })
      expect(bad.status, `days "${days}"`).toBe(status)
      expect(bad.text).toContain('Give the number of days as a whole number from 1 to 36500')
      // nothing changed (a bug that saved before checking would show the new mode here)
      expect(checked(bad.text)).toBe('default')
    }
    const unknown = await b.post('/settings/retention', { csrf, mode: 'weekly', days: '7' })
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain('Choose one of the retention options')

    const ok = await b.post('/settings/retention', { csrf, mode: 'media', days: '30' })
    expect([ok.status, ok.location]).toEqual([303, '/settings#retention'])
    const after = await b.get('/settings')
    expect(effective(after.text)).toBe('delete recordings 30 days after the note was created (transcripts and summaries kept)')
    expect(checked(after.text)).toBe('media')
    expect(after.text).toContain('name="days" min="1" max="36500" value="30"')

    const events = await t.store.all<{ actor_type: string; details: string }>("SELECT actor_type, details FROM audit_events WHERE action = 'retention.changed'")
    expect(events.map(e => [e.actor_type, JSON.parse(e.details)])).toEqual([['user', { oldMode: 'default', oldDays: null, newMode: 'media', newDays: 30 }]])
  })

  test('a form without the session\'s security token changes nothing', async () => {
    const t = await webAppWithPassword(EMAIL, PASSWORD)
    const { b } = await signedIn(t, EMAIL, PASSWORD)
    const res = await b.post('/settings/retention', { csrf: 'not-the-token', mode: 'notes', days: '1' })
    expect(res.status).toBe(403)
    expect(checked((await b.get('/settings')).text)).toBe('default')
  })

  test('the player\'s route of a note whose recording was removed answers 404 naming the policy and the date', async () => {
    const clock = fixedClock('2026-05-01T10:00:00.000Z')
    const t = await webAppWithPassword(EMAIL, PASSWORD, { clock })
    const { b, csrf } = await signedIn(t, EMAIL, PASSWORD)
    await b.post('/settings/retention', { csrf, mode: 'media', days: '7' })
    const key = await t.key({ email: EMAIL })
    const bytes = new TextEncoder().encode('RIFF-recording')
    const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'a.wav', contentType: 'audio/wav', fileSize: bytes.length } })
    expect((await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: bytes }))).status).toBeLessThan(300)
    await t.store.run("UPDATE notes SET status = 'Done', processing_stage = NULL WHERE id = ?", [up.body.noteId])
    expect((await b.get(`/notes/${up.body.noteId}/media`)).status).toBe(200)

    clock.set('2026-05-09T10:00:00.000Z')
    await t.services.retention.sweep()
    // signed in again: the session of a week ago has ended
    const gone = await (await signedIn(t, EMAIL, PASSWORD)).b.get(`/notes/${up.body.noteId}/media`)
    expect(gone.status).toBe(404)
    expect(JSON.parse(gone.text).error.message).toContain('was removed by the retention policy on 2026-05-09')
  })
})
