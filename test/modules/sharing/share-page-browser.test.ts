import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { chromium, type Browser, type Page } from 'playwright-core'
import { freePort, ROOT } from '../../helpers/process'
import { inSteps } from '../../helpers/web'
import { HOSTILE, MEETING } from '../../helpers/shared-note'

/**
 * A share link in headless Chromium without a session, against a real server in a subprocess
 * (test/fixtures/share-server.ts): made with the API, opened (transcript, summary, the player seeking
 * by byte ranges), screenshots at 390 and 1280 px into docs/screenshots/; revoked and expired → the
 * same 404; a wrong passphrase limited; the owner's `share.opened` events; a hostile note's every
 * shown field run by nothing; no token in any log line the server wrote nor in any Referer sent.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const SHOTS = join(ROOT, 'docs/screenshots')

let server: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let browser: Browser | undefined
let base = ''
let dataDir = ''
let serverSaid = ''
let seeded: { key: string; noteId: string; hostileId: string }
/** every token this test made: none may appear in the server's output or in a Referer */
const tokens: string[] = []
const referers: string[] = []

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  dataDir = mkdtempSync(join(tmpdir(), 'notesvc-share-'))
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  const env = { ...process.env, NOTESVC_DATA_DIR: dataDir, PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_LLM: 'builtin' }
  server = Bun.spawn(['bun', 'run', 'test/fixtures/share-server.ts'], { cwd: ROOT, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  // every line the server writes, kept whole: the token must be in none of them
  void (async () => { for await (const chunk of server!.stderr) serverSaid += new TextDecoder().decode(chunk) })()
  const reader = server.stdout.getReader()
  let out = ''
  while (out.split('\n').length < 3) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the share server ended: ${out} ${serverSaid}`)
    out += new TextDecoder().decode(value)
  }
  const [listening, json] = out.split('\n')
  expect(listening).toBe(`listening ${port}`)
  seeded = JSON.parse(json!)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  server?.kill('SIGTERM')
  await server?.exited
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${seeded.key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

async function share(noteId: string, body: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const r = await api('POST', `/v1/notes/${noteId}/shares`, body)
  expect(r.status).toBe(201)
  tokens.push(new URL(r.body.url).pathname.slice(3))
  return r.body
}

/** A new browser context: no cookies, no session; every Referer it sends is kept; alert and errors counted. */
async function visitor(width: number): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser!.newContext({ viewport: { width, height: 900 } })
  await context.addInitScript(() => {
    const w = window as unknown as { __alerts: number; alert: (m?: string) => void }
    w.__alerts = 0
    w.alert = () => { w.__alerts++ }
  })
  const page = await context.newPage()
  page.setDefaultTimeout(45_000)
  const errors: string[] = []
  page.on('pageerror', e => errors.push(String(e)))
  page.on('request', r => {
    // a request still being read when the test closes its page can no longer give its headers (and
    // reached no server that matters to the test): only that rejection is let go
    r.allHeaders().then(h => { if (h['referer']) referers.push(`${r.url()} ← ${h['referer']}`) }, err => {
      if (!/has been closed/.test(String(err))) throw err
    })
  })
  return { page, errors, close: () => context.close() }
}

const ALL = { showSummary: true, showSpeakers: true, showRecording: true, formats: ['txt', 'srt', 'vtt'] }

test('a link opened without a session: transcript, summary, the player seeking; revoked and expired → the same 404; screenshots', async () => {
  await inSteps(() => serverSaid.slice(-4000), async step => {
    step('make the link with the API')
    const s = await share(seeded.noteId, ALL)
    const notFound = await (await fetch(`${base}/s/${'Z'.repeat(43)}`)).text()

    for (const width of [1280, 390]) {
      step(`open it at ${width} px`)
      const v = await visitor(width)
      const ranges: number[] = []
      v.page.on('response', r => { if (new URL(r.url()).pathname.endsWith('/media')) ranges.push(r.status()) })
      const res = await v.page.goto(s.url)
      expect(res!.status()).toBe(200)
      expect(res!.headers()['set-cookie']).toBeUndefined()
      await expect(v.page.textContent('#note-title')).resolves.toBe(MEETING.title)
      await expect(v.page.textContent('#summary')).resolves.toBe(MEETING.summary)
      const texts = await v.page.$$eval('.segments .text', els => els.map(e => e.textContent))
      expect(texts).toEqual(MEETING.segments.map(x => x.text))
      expect(await v.page.$$eval('.segments .speaker', els => els.map(e => e.textContent))).toEqual(['Alice Marsh', 'Bob Okafor', 'Alice Marsh'])
      expect(await v.page.$$('a[href="/"], a[href^="/notes"]')).toHaveLength(0)

      step('seek: play from the second segment')
      await v.page.click('button[data-start="5"]')
      await v.page.waitForFunction(() => (document.getElementById('player') as HTMLMediaElement).currentTime >= 5)
      expect(ranges).toContain(206)
      await v.page.evaluate(() => (document.getElementById('player') as HTMLMediaElement).pause())
      await v.page.screenshot({ path: join(SHOTS, `share-${width}.png`), fullPage: true })
      expect(v.errors).toEqual([])
      await v.close()
    }

    step('revoke it: the page is the 404 of an unknown link')
    expect((await api('DELETE', `/v1/notes/${seeded.noteId}/shares/${s.id}`)).status).toBe(204)
    const v = await visitor(1280)
    const gone = await v.page.goto(s.url)
    expect(gone!.status()).toBe(404)
    expect(await gone!.text()).toBe(notFound)
    await expect(v.page.textContent('h1')).resolves.toBe('This link is not available')

    step('an expired link: the same 404')
    const expiresAt = new Date(Date.now() + 1500).toISOString()
    const soon = await share(seeded.noteId, { ...ALL, expiresAt })
    expect((await v.page.goto(soon.url))!.status()).toBe(200)
    while (Date.now() <= Date.parse(expiresAt)) await Bun.sleep(100)
    const expired = await v.page.goto(soon.url)
    expect([expired!.status(), await expired!.text()]).toEqual([404, notFound])
    await v.close()
  })
}, 120_000)

test('a passphrase link: wrong passphrases refused, then 429; the right one on another link opens it', async () => {
  await inSteps(() => serverSaid.slice(-4000), async step => {
    const s = await share(seeded.noteId, { ...ALL, passphrase: 'blue harbour lights' })
    const v = await visitor(1280)
    step('the form, not the note')
    expect((await v.page.goto(s.url))!.status()).toBe(401)
    expect(await v.page.content()).not.toContain(MEETING.title)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      step(`wrong passphrase ${i + 1}`)
      await v.page.fill('#passphrase', `guess number ${i}`)
      const [answer] = await Promise.all([
        v.page.waitForResponse(r => r.request().method() === 'POST'),
        v.page.click('button[type=submit]'),
      ])
      statuses.push(answer.status())
      if (answer.status() === 429) expect(Number(answer.headers()['retry-after'])).toBeGreaterThan(0)
      await v.page.waitForSelector('.error')
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
    await expect(v.page.textContent('.error')).resolves.toContain('Too many wrong passphrases')

    step('the right passphrase on a link not yet guessed at')
    const other = await share(seeded.noteId, { ...ALL, passphrase: 'green valley road' })
    await v.page.goto(other.url)
    await v.page.fill('#passphrase', 'green valley road')
    await Promise.all([v.page.waitForURL(u => u.searchParams.has('k')), v.page.click('button[type=submit]')])
    await expect(v.page.textContent('#note-title')).resolves.toBe(MEETING.title)
    expect(v.errors).toEqual([])
    await v.close()
  })
}, 120_000)

test('a hostile note: no field runs, every one shown as text; the owner\'s audit log has share.opened', async () => {
  const s = await share(seeded.hostileId, ALL)
  const v = await visitor(1280)
  await v.page.goto(s.url)
  await v.page.click('button[data-start="2"]')
  await v.page.waitForFunction(() => (document.getElementById('player') as HTMLMediaElement).currentTime >= 2)
  for (const selector of ['#note-title', '#summary', '.segments .speaker', '.segments .text']) {
    await v.page.click(selector)
  }
  const state = await v.page.evaluate(() => ({
    runs: (window as unknown as { __runs?: number }).__runs ?? 0,
    alerts: (window as unknown as { __alerts: number }).__alerts,
    images: document.images.length,
    svgs: document.querySelectorAll('svg').length,
    scripts: [...document.scripts].map(x => new URL(x.src).pathname),
    links: [...document.links].map(a => a.getAttribute('href')),
    title: document.getElementById('note-title')!.textContent,
    speakers: [...document.querySelectorAll('.segments .speaker')].map(e => e.textContent),
    texts: [...document.querySelectorAll('.segments .text')].map(e => e.textContent),
    summary: document.getElementById('summary')!.textContent,
  }))
  expect(state).toMatchObject({ runs: 0, alerts: 0, images: 0, svgs: 0, scripts: ['/assets/share.js'], title: HOSTILE.title, summary: HOSTILE.summary })
  expect(state.texts).toEqual(HOSTILE.segments.map(x => x.text))
  expect(state.speakers).toEqual(HOSTILE.segments.map(x => HOSTILE.speakers.find(p => p.label === x.speaker)!.name as string))
  expect(state.links.every(h => h!.startsWith('/s/'))).toBe(true)
  expect(v.errors).toEqual([])
  await v.close()

  // openings are written in batches, within a second (modules/sharing/openings.ts)
  let opened: any[] = []
  for (let tries = 0; tries < 100 && opened.length === 0; tries++) {
    if (tries) await Bun.sleep(100)
    const events = await api('GET', '/v1/audit-events?action=share.opened&limit=100')
    expect(events.status).toBe(200)
    opened = events.body.data.filter((e: { actor: { id: string } }) => e.actor.id === s.id)
  }
  expect(opened).toHaveLength(1)
  expect(opened[0]).toMatchObject({ action: 'share.opened', actor: { type: 'share', id: s.id }, target: { type: 'note', id: seeded.hostileId }, ip: '127.0.0.1' })
  expect(opened[0].userAgent).toContain('Chrome')
}, 120_000)

test('no token in any log line the server wrote, nor in any Referer the pages sent', async () => {
  expect(tokens.length).toBeGreaterThanOrEqual(5)
  // the server did log: one access line per request, naming the route template
  expect(serverSaid).toContain('"route":"/s/:token"')
  expect(serverSaid).toContain('"route":"/s/:token/:file"')
  for (const token of tokens) expect(serverSaid).not.toContain(token)
  expect(referers).toEqual([])
})
