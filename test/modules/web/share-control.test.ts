import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { chromium, type Browser } from 'playwright-core'
import { freePort, ROOT } from '../../helpers/process'
import { inSteps } from '../../helpers/web'
import { MEETING } from '../../helpers/shared-note'

/**
 * The note page's Share… control (assets/library/share.js) in headless Chromium against a real server
 * (test/fixtures/share-server.ts): the owner signs in, makes a link choosing what it shows, copies
 * its address, sees it opened by someone without a session, and revokes it; screenshot to
 * docs/screenshots/note-share-1280.png.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'owner@example.com'
const PASSWORD = 'a share-control passphrase'

let server: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let browser: Browser | undefined
let base = ''
let dataDir = ''
let serverSaid = ''
let seeded: { key: string; noteId: string }

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  dataDir = mkdtempSync(join(tmpdir(), 'notesvc-share-control-'))
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  const env = { ...process.env, NOTESVC_DATA_DIR: dataDir, PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_LLM: 'builtin', NOTESVC_OWNER_EMAIL: EMAIL, SHARE_PASSWORD: PASSWORD }
  server = Bun.spawn(['bun', 'run', 'test/fixtures/share-server.ts'], { cwd: ROOT, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  void (async () => { for await (const chunk of server!.stderr) serverSaid = (serverSaid + new TextDecoder().decode(chunk)).slice(-4000) })()
  const reader = server.stdout.getReader()
  let out = ''
  while (out.split('\n').length < 3) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the share server ended: ${out} ${serverSaid}`)
    out += new TextDecoder().decode(value)
  }
  seeded = JSON.parse(out.split('\n')[1]!)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'] })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  server?.kill('SIGTERM')
  await server?.exited
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

test('make a link from the note page, see it opened, revoke it', async () => {
  await inSteps(() => serverSaid, async step => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 1000 } })
    const page = await context.newPage()
    page.setDefaultTimeout(45_000)
    const errors: string[] = []
    page.on('pageerror', e => errors.push(String(e)))

    step('sign in and open the note')
    await page.goto(`${base}/notes/${seeded.noteId}`)
    await page.fill('input[name=email]', EMAIL)
    await page.fill('input[name=password]', PASSWORD)
    await Promise.all([page.waitForURL(u => u.pathname === `/notes/${seeded.noteId}`), page.click('button[type=submit]')])
    await page.waitForFunction(title => document.getElementById('note-title')!.textContent === title, MEETING.title)

    step('make a link with the recording and .srt, no expiry')
    await page.click('#share > summary')
    await page.waitForSelector('#share-list li')
    await expect(page.textContent('#share-list')).resolves.toContain('No links yet.')
    await page.check('#share-recording')
    await page.check('#share-srt')
    await page.selectOption('#share-expires', '0')
    await page.click('#share-form button[type=submit]')
    await page.waitForSelector('#share-url')
    const url = await page.inputValue('#share-url')
    expect(url).toMatch(new RegExp(`^${base}/s/[A-Za-z0-9_-]{43}$`))
    await page.waitForSelector('#share-list li[data-share]')
    await expect(page.textContent('#share-list')).resolves.toContain('opened 0 times')
    await expect(page.textContent('#share-list')).resolves.toContain("Shows transcript, summary, recording, downloads (srt).")

    step('someone without a session opens it')
    const visitor = await browser!.newContext()
    const shared = await visitor.newPage()
    expect((await shared.goto(url))!.status()).toBe(200)
    expect(await shared.$('audio#player')).not.toBeNull()
    expect(await shared.$('a[href$="/transcript.srt"]')).not.toBeNull()
    expect(await shared.$('a[href$="/transcript.txt"]')).toBeNull()

    step('the owner sees the opening, then revokes the link')
    await page.click('#share > summary')
    await page.click('#share > summary')
    await page.waitForFunction(() => document.getElementById('share-list')!.textContent!.includes('opened 1 time'))
    expect(await page.textContent('#share-list')).not.toContain('[object')
    await page.locator('#share').screenshot({ path: join(ROOT, 'docs/screenshots/note-share-1280.png') })
    await page.click('#share-list button.danger')
    await page.waitForFunction(() => document.getElementById('share-status')!.textContent!.startsWith('Revoked'))
    await page.waitForFunction(() => document.getElementById('share-list')!.textContent!.includes('revoked'))
    expect((await shared.goto(url))!.status()).toBe(404)
    expect(errors).toEqual([])
    await visitor.close()
    await context.close()
  })
}, 120_000)
