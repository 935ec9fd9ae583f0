/**
 * Retention in headless Chromium (Debian's `chromium`): the settings page's Retention form (a bad
 * number of days refused with what to give, then saved), and the note page of a recording the policy
 * removed, which says so where the player was and still shows the transcript.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { freePort } from '../../helpers/process'
import { createTestApp, fixedClock } from '../../helpers/app'

const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'keeper@example.com'
const PASSWORD = 'a retention passphrase'

let browser: Browser | undefined
let server: ReturnType<typeof Bun.serve> | undefined
let t: ReturnType<typeof createTestApp>
let base = ''
const clock = fixedClock('2026-02-01T09:00:00.000Z')

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  // the app on a clock the test moves, served on loopback for the browser
  t = createTestApp({ clock, env: { NOTESVC_PUBLIC_URL: base } })
  server = Bun.serve({ port, hostname: '127.0.0.1', fetch: request => t.app.handle(request) })
  await t.services.web.setPassword(EMAIL, PASSWORD)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  server?.stop(true)
})

test('set "delete recordings after 30 days" on the settings page; the old note\'s page says its recording was removed', async () => {
  // a recording made on 1 February, finished
  const key = await t.key({ email: EMAIL })
  const bytes = new TextEncoder().encode('RIFF-february-recording')
  const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'february.wav', contentType: 'audio/wav', fileSize: bytes.length } })
  const put = await fetch(up.body.uploadUrl.replace('http://localhost', base), { method: 'PUT', headers: up.body.headers, body: bytes })
  expect(put.status).toBeLessThan(300)
  const id = up.body.noteId
  await t.store.run("UPDATE notes SET status = 'Done', processing_stage = NULL, title = 'February call' WHERE id = ?", [id])
  await t.store.run("UPDATE note_bodies SET original_transcription = 'We agreed on the February budget.' WHERE note_id = ?", [id])

  clock.set('2026-03-15T09:00:00.000Z') // 42 days later
  const page = await browser!.newPage()
  await page.goto(`${base}/signin?next=/settings`)
  await page.fill('input[name="email"]', EMAIL)
  await page.fill('input[name="password"]', PASSWORD)
  await Promise.all([page.waitForURL(`${base}/settings`), page.click('form[action="/signin"] button[type="submit"]')])
  expect(await page.textContent('#retention-effective')).toBe('keep everything forever')

  // no number of days: refused, with what to give
  await page.check('#retention-form input[value="media"]')
  await Promise.all([page.waitForLoadState('load'), page.evaluate(() => (document.getElementById('retention-form') as HTMLFormElement).submit())])
  expect(await page.textContent('[role="alert"]')).toContain('Give the number of days as a whole number from 1 to 36500')

  await page.check('#retention-form input[value="media"]')
  await page.fill('#retention-form input[name="days"]', '30')
  await Promise.all([page.waitForURL(`${base}/settings#retention`), page.click('#retention-form button[type="submit"]')])
  expect(await page.textContent('#retention-effective')).toBe('delete recordings 30 days after the note was created (transcripts and summaries kept)')

  expect(await t.services.retention.sweep()).toMatchObject({ recordingsRemoved: 1 })
  await page.goto(`${base}/notes/${id}`)
  await page.waitForSelector('#media-removed')
  expect(await page.textContent('#media-removed')).toBe('The recording was removed by the retention policy on 2026-03-15. The transcript and summary are kept.')
  expect(await page.locator('#player').count()).toBe(0)
  await page.waitForFunction(() => document.body.textContent?.includes('We agreed on the February budget.'))
  await page.close()
}, 60_000)
