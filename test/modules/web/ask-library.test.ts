import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import type { Server } from 'bun'
import { chromium, type Browser } from 'playwright-core'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { listen, type Fetching } from '../../../src/http/listen'
import { makeWav } from '../../fixtures/wav'
import { freePort } from '../../helpers/process'
import { createWebTestApp, inSteps, type WebTestApp } from '../../helpers/web'

/**
 * "Ask your library" on the library page in headless Chromium (Debian's `chromium`), against the app
 * served over HTTP from this process: a question typed into the box is answered with its citations,
 * each a link to the note at the moment cited; following it opens the note page with the player set to
 * that moment and the segment said then marked and in view. The note is a real WAV upload whose
 * transcript is stored as the pipeline stores it.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'asker@example.com'
const PASSWORD = 'an asking passphrase'

/** enough segments before the cited one that it starts below the first screen at 390 × 600 */
const SEGMENTS: TranscriptSegment[] = [
  ...Array.from({ length: 14 }, (_, i) => ({ start: i * 2, end: i * 2 + 2, text: `Opening remark number ${i + 1} about the agenda.`, speaker: 'A' })),
  { start: 28, end: 34.5, text: 'The loading bays on the north side will be repaved in April by Kessler Paving.', speaker: 'B' },
  { start: 34.5, end: 40, text: 'Thanks, that settles the spring plan.', speaker: 'A' },
]
const CITED = SEGMENTS[14]!

let t: WebTestApp
let server: Server<unknown> | undefined
let browser: Browser | undefined
let base = ''
let noteId = ''

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  t = createWebTestApp({ env: { NOTESVC_PUBLIC_URL: base } })
  await t.web().setPassword(EMAIL, PASSWORD)
  const key = await t.key({ email: EMAIL, plan: 'pro' })
  const wav = makeWav({ seconds: 42 })
  const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: 'warehouse.wav', contentType: 'audio/wav', fileSize: wav.length } })
  noteId = up.body.noteId
  expect((await t.app.handle(new Request(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: wav as unknown as BodyInit }))).status).toBe(200)
  await t.services.notes.saveTranscript(noteId, {
    transcript: SEGMENTS.map(s => s.text).join(' '), language: 'en', segments: SEGMENTS,
    speakers: ['A', 'B'].map(label => ({ label, name: null, engine: 'builtin', embedding: null, profileId: null })),
  })
  await t.services.notes.finish(noteId, { title: 'Warehouse planning', summary: 'The spring plan.', language: 'en', segments: SEGMENTS, structuredContent: null })
  expect((await t.call('POST', '/v1/notes', { token: key, body: { title: 'Wiki', content: 'The loading dock schedule is on the wiki.' } })).status).toBe(201)
  server = listen(t.app as unknown as Fetching, { port, hostname: '127.0.0.1' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=user-gesture-required', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop(true)
})

test('a question in "Ask your library" is answered with a cited link that opens the note at that moment', async () => {
  const context = await browser!.newContext({ viewport: { width: 390, height: 600 } })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const errors: string[] = []
  page.on('pageerror', e => errors.push(String(e)))
  page.on('console', m => { if (m.type() === 'error') errors.push(`${m.text()} (${m.location().url})`) })
  await inSteps(() => errors.join('\n'), async step => {
    step('sign in to the library')
    await page.goto(`${base}/`)
    await page.fill('input[name=email]', EMAIL)
    await page.fill('input[name=password]', PASSWORD)
    await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')])

    step('ask the library')
    await page.fill('#library-question', 'Who repaves the loading bays?')
    await page.click('#ask-library-form button[type=submit]')
    const first = page.locator('#library-answers .citations li').first()
    await first.waitFor()
    expect(await page.locator('#library-answers .qa .a').first().textContent()).toContain('Kessler Paving')
    const link = first.locator('a')
    expect(await link.getAttribute('href')).toBe(`/notes/${noteId}?t=${CITED.start}`)
    expect(await link.textContent()).toBe('Warehouse planning at 00:28')
    expect(await first.locator('.passage').textContent()).toBe(CITED.text)
    expect(await page.locator('#library-answers .cost').first().textContent()).toBe('1 credit charged.')

    step('follow the citation: the note at that moment')
    await Promise.all([page.waitForURL(`${base}/notes/${noteId}?t=${CITED.start}`), link.click()])
    const current = page.locator('#segments .seg.current')
    await current.waitFor()
    expect(await current.locator('.text').textContent()).toBe(CITED.text)
    expect(await current.isVisible()).toBe(true)
    const inView = await current.evaluate(row => { const r = row.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight })
    expect(inView).toBe(true)
    await page.waitForFunction(at => {
      const player = document.getElementById('player') as HTMLAudioElement | null
      return !!player && player.readyState >= 1 && Math.abs(player.currentTime - at) < 0.01
    }, CITED.start)
    expect(await page.evaluate(() => (document.getElementById('player') as HTMLAudioElement).paused)).toBe(true)
  })
  expect(errors).toEqual([])
  await context.close()
}, 60_000)
