import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import axe from 'axe-core'
import { chromium, type Browser, type Page } from 'playwright-core'
import { apiClient, firstStartKey, freePort, ROOT, startServer, tempDir } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'
import { inSteps } from '../../helpers/web'

/**
 * The library's polish (issue 24), in headless Chromium at a phone's 390×844 and a desktop's 1280×800:
 * the folders stay on screen above the notes, each done note shows the start of its summary in two
 * lines at most, a processing note shows the stage the API reports (never "Summarizing" before anything
 * was transcribed), no empty band under the note's title card, the Credits card names what was charged
 * in words. axe-core finds no violation of any impact on the pages.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'polish@example.com'
const PASSWORD = 'a polish passphrase'
const SUMMARY_TEXT = 'The team met on Monday to plan the launch of the new billing page. Ana will write the announcement by Friday and send it to the list. Ben will fix the rounding bug in the invoices before anything else. We agreed to ship the beta to ten customers next week, collect their feedback in a shared document and meet again on Thursday to decide on the public date.'

const data = tempDir('notesvc-polish-')
let server: Awaited<ReturnType<typeof startServer>> | undefined
let browser: Browser | undefined
let base = ''
let serverSaid = ''
/** notes made through the API: a summarized text, an upload never sent, a recording sent and completed */
const ids = { text: '', waiting: '', recording: '' }

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  const env = { NOTESVC_DATA_DIR: join(data.path, 'data'), PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_OWNER_EMAIL: EMAIL, NOTESVC_LOG_LEVEL: 'warn' }
  server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env, timeoutMs: 30_000 })
  const key = await firstStartKey(server.proc.stdout as ReadableStream<Uint8Array>)
  void (async () => { for await (const chunk of server!.proc.stderr as ReadableStream<Uint8Array>) serverSaid = (serverSaid + new TextDecoder().decode(chunk)).slice(-4000) })()
  const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'accounts', 'password', '--email', EMAIL], { cwd: ROOT, env: { ...process.env, ...env }, stdin: new TextEncoder().encode(PASSWORD + '\n'), stdout: 'pipe', stderr: 'pipe' })
  expect(await proc.exited).toBe(0)

  const call = apiClient(base, key)
  for (const name of ['Interviews', 'Planning', 'Customers', 'Team <weekly>']) expect((await call('POST', '/v1/folders', { name })).status).toBe(201)
  const text = await call('POST', '/v1/notes', { title: 'Launch planning', content: SUMMARY_TEXT, format: 'note' })
  expect(text.status).toBe(201)
  ids.text = text.body.id
  const waiting = await call('POST', '/v1/uploads', { fileName: 'not-sent-yet.wav', contentType: 'audio/wav' })
  expect(waiting.status).toBe(201)
  ids.waiting = waiting.body.noteId
  const up = await call('POST', '/v1/uploads', { fileName: 'short-call.wav', contentType: 'audio/wav' })
  ids.recording = up.body.noteId
  const put = await fetch(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: Buffer.from(speechWav(3)) })
  expect(put.status).toBeLessThan(300)
  await put.arrayBuffer()
  expect((await call('POST', `/v1/uploads/${ids.recording}/complete`)).status).toBe(202)

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  data.remove()
})

/** axe-core in the page: no violation of any impact. */
async function noAxeViolations(page: Page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v: any) => `${v.id}[${v.impact}] ${v.nodes[0]?.target}`)
  })
  expect(violations).toEqual([])
}

const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!

for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
  test(`the library's polish at ${viewport.width}×${viewport.height}`, async () => {
    const context = await browser!.newContext({ viewport })
    const page = await context.newPage()
    page.setDefaultTimeout(30_000)
    const errors: string[] = []
    page.on('pageerror', e => errors.push(String(e)))
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()) })

    await inSteps(() => serverSaid, async step => {
      step('sign in')
      await page.goto(`${base}/signin?next=/`)
      await page.fill('input[name=email]', EMAIL)
      await page.fill('input[name=password]', PASSWORD)
      await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')])
      await page.waitForSelector('#folders[aria-busy=false]')
      await page.waitForSelector(`li.note[data-note-id="${ids.text}"]`)

      step('the folders are on screen, above the notes and the pager')
      const folders = await box(page, '#folders')
      expect(folders.y).toBeGreaterThanOrEqual(0)
      expect(folders.y + folders.height).toBeLessThanOrEqual(viewport.height)
      expect(folders.y + folders.height).toBeLessThanOrEqual((await box(page, '.pager')).y)
      await expect(page.locator('#folders li', { hasText: 'Team <weekly>' }).isVisible()).resolves.toBe(true)

      step('a done note shows the start of its summary, two lines at most')
      const preview = page.locator(`li.note[data-note-id="${ids.text}"] .preview`)
      const shown = (await preview.textContent())!
      expect(shown.length).toBeGreaterThan(40)
      expect(SUMMARY_TEXT.replace(/\s+/g, ' ')).toContain(shown.slice(0, 40))
      const lines = await preview.evaluate(e => e.clientHeight / parseFloat(getComputedStyle(e).lineHeight))
      expect(lines).toBeGreaterThan(0.9)
      expect(lines).toBeLessThan(2.1)
      // notes not done have no summary to show
      expect(await page.locator(`li.note[data-note-id="${ids.waiting}"] .preview`).count()).toBe(0)

      step('an upload whose file never came says so')
      await expect(page.locator(`li.note[data-note-id="${ids.waiting}"] .badge`).textContent()).resolves.toBe('Waiting for upload')
      await noAxeViolations(page)
      await page.screenshot({ path: `/tmp/notesvc-polish-library-${viewport.width}.png` })

      step('a note follows the stages the API reports')
      // The API's answers for a recording moving through processing, one per poll of the note's page.
      const answers = [
        { processingStage: 'converting', progress: null },
        { processingStage: 'transcribing', progress: 0.4 },
        { processingStage: 'summarizing', progress: 1 },
      ]
      let served = 0
      await page.route(`**/v1/notes/${ids.waiting}/status`, route => {
        const a = answers[Math.min(served++, answers.length - 1)]!
        return route.fulfill({ json: { status: 'Summarizing', ...a, isComplete: false, hasError: false, errorMessage: null, errorCode: null } })
      })
      await page.goto(`${base}/notes/${ids.waiting}`)
      await page.waitForFunction(() => document.querySelector('#note-meta .badge')?.textContent === 'Waiting for upload')
      const seen = await page.evaluate(() => new Promise<string[]>(resolve => {
        const texts = [document.querySelector('#note-meta .badge')!.textContent!]
        new MutationObserver(() => {
          const t = document.querySelector('#note-meta .badge')?.textContent ?? ''
          if (t !== texts[texts.length - 1]) texts.push(t)
          if (t === 'Summarizing') resolve(texts)
        }).observe(document.getElementById('note-meta')!, { subtree: true, childList: true, characterData: true })
      }))
      expect(seen).toEqual(['Waiting for upload', 'Converting', 'Transcribing 40 %', 'Summarizing'])
      await page.unroute(`**/v1/notes/${ids.waiting}/status`)

      step('no empty band under the title card; the Credits card in words')
      await page.goto(`${base}/notes/${ids.recording}`)
      await page.waitForSelector('#player-section:not([hidden])')
      const actions = await box(page, '.note-actions')
      const recording = await box(page, '#player-section')
      // the same gap as between two cards (1rem = 15 px), not an empty line and its margins
      expect(recording.y - (actions.y + actions.height)).toBeLessThanOrEqual(16)
      await page.waitForFunction(() => document.getElementById('note-cost')?.textContent?.startsWith('This note'))
      await expect(page.locator('#note-cost').textContent()).resolves.toBe('This note has cost 1 credit (Recording upload 1 credit).')
      // a status line, when there is one, sits between the cards without overlapping them
      await page.click('#pin')
      await page.waitForFunction(() => /^(Pinned|Unpinned)\.$/.test(document.getElementById('action-status')?.textContent ?? ''))
      const status = await box(page, '#action-status')
      expect(status.y).toBeGreaterThanOrEqual(actions.y + actions.height)
      expect(status.y + status.height).toBeLessThanOrEqual((await box(page, '#player-section')).y)
      await noAxeViolations(page)
      await page.screenshot({ path: `/tmp/notesvc-polish-note-${viewport.width}.png`, fullPage: true })
      expect(errors).toEqual([])
    })
    await context.close()
  }, 120_000)
}
