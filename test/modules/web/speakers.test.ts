import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import axe from 'axe-core'
import type { Server } from 'bun'
import { chromium, type Browser, type Page } from 'playwright-core'
import { parseSync as parseSubtitles } from 'subtitle'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'
import { listen, type Fetching } from '../../../src/http/listen'
import { freePort } from '../../helpers/process'
import { createWebTestApp, inSteps, type WebTestApp } from '../../helpers/web'

/**
 * A diarized note's page in headless Chromium (Debian's `chromium`) at 390 px wide, against the app
 * served over HTTP from this process: the note is made through the notes service as the pipeline makes
 * it (a pending upload, its transcript with speakers A and B, its summary). The page shows each turn
 * with its speaker's name, renames Speaker A to Maria in place (the name changes everywhere on the page
 * and in the subtitles), filters to one speaker; a note without speakers shows none of it. axe-core
 * scans the page: no violations.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'diarized@example.com'
const PASSWORD = 'a speakers passphrase'

const SEGMENTS: TranscriptSegment[] = [
  { start: 0, end: 4.2, text: 'Good morning, let us go through the launch plan.', speaker: 'A' },
  { start: 4.2, end: 7.9, text: 'The billing fix is ready for review.', speaker: 'B' },
  { start: 7.9, end: 10.5, text: 'It passed the tests last night.', speaker: 'B' },
  { start: 10.5, end: 14, text: 'Then we ship the beta on Friday.', speaker: 'A' },
]
const A_SAID = [SEGMENTS[0]!.text, SEGMENTS[3]!.text]
const B_SAID = [SEGMENTS[1]!.text, SEGMENTS[2]!.text]

let t: WebTestApp
let server: Server<unknown> | undefined
let browser: Browser | undefined
let base = ''
let key = ''
let diarized = ''
let plain = ''
let withVoices = ''
/** notes whose Speaker A sounds like Clara, a voice the library remembers: one to confirm, one to dismiss */
const suggested = { confirm: '', dismiss: '' }

/**
 * A note as the pipeline leaves it: created pending, its transcript (with `speakers`, if given, and their
 * voice prints with `voices`), then its summary.
 */
async function processedNote(title: string, speakers: string[], voices = false, suggestedToA: { profileId: string; name: string; similarity: number } | null = null): Promise<string> {
  const lib = { accountId: (await t.services.accounts.ensureAccount(EMAIL)).id, sandbox: false }
  const note = await t.services.notes.createPending(lib, { title: `${title}.wav`, type: 'audio', styleId: 'meeting-notes', language: null, source: 'upload', stage: 'transcribing' })
  const segments = speakers.length ? SEGMENTS : SEGMENTS.map(({ speaker: _, ...s }) => s)
  const transcript = segments.map(s => s.text).join(' ')
  await t.services.notes.saveTranscript(note.id, { transcript, language: 'en', segments, speakers: speakers.map((label, i) => ({ label, name: null, engine: voices ? 'builtin' : null, embedding: voices ? [i, 1 - i] : null, profileId: null, suggestion: label === 'A' ? suggestedToA : null })) })
  const who = speakers.length ? speakers.map(l => `Speaker ${l}`) : []
  await t.services.notes.finish(note.id, {
    title, summary: 'The launch plan.', language: 'en', segments,
    structuredContent: { 'meeting-notes': { summary: 'The launch plan was reviewed.', attendees: who, decisions: ['Ship the beta on Friday.'], actionItems: [{ task: 'Announce the beta', owner: who[0] ?? null, due: null }] } },
  })
  return note.id
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  t = createWebTestApp({ env: { NOTESVC_PUBLIC_URL: base } })
  await t.web().setPassword(EMAIL, PASSWORD)
  key = (await t.services.accounts.createKey({ email: EMAIL, scopes: ['notes:read'] })).key
  diarized = await processedNote('Launch sync', ['A', 'B'])
  plain = await processedNote('Solo memo', [])
  withVoices = await processedNote('Voice memo', ['A', 'B'], true)
  const account = (await t.services.accounts.ensureAccount(EMAIL)).id
  await t.store.run("INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES ('spk_clara', ?, 0, 'Clara', 'builtin', '[1,0]', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')", [account])
  const clara = { profileId: 'spk_clara', name: 'Clara', similarity: 0.95 }
  suggested.confirm = await processedNote('Tuesday sync', ['A', 'B'], true, clara)
  suggested.dismiss = await processedNote('Wednesday sync', ['A', 'B'], true, clara)
  // with Clara, the account already remembers 500 voices, the most it may (NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT unset)
  for (let i = 0; i < 499; i++) {
    await t.store.run("INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES (?, ?, 0, ?, 'builtin', '[1,0]', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')", [`spk_seed_${i}`, account, `Voice ${i}`])
  }
  server = listen(t.app as unknown as Fetching, { port, hostname: '127.0.0.1' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop(true)
})

/** The names that open the transcript's turns, in order. */
const turnNames = (page: Page) => page.locator('#segments button.speaker-name').allTextContents()
/** The texts of the segments a reader can see. */
const visibleTexts = (page: Page) => page.locator('#segments .seg .text').evaluateAll(els => els.filter(e => (e as HTMLElement).offsetParent !== null).map(e => e.textContent))

test('a diarized note at 390 px: names per turn, rename Speaker A to Maria in place, the subtitles say Maria, filter to one speaker; a suggested voice confirmed and dismissed', async () => {
  const context = await browser!.newContext({ viewport: { width: 390, height: 844 }, acceptDownloads: true })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const errors: string[] = []
  page.on('pageerror', e => errors.push(String(e)))
  // No response listener on the context (see library.test.ts: Playwright's objects for every request);
  // a failed request is the console's error, with its URL. The notes were made without a recording:
  // the player's probe of /media is the one refused request.
  page.on('console', m => { if (m.type() === 'error' && !/^\/notes\/[^/]+\/media$/.test(new URL(m.location().url || 'about:blank').pathname)) errors.push(`${m.text()} (${m.location().url})`) })
  // what went wrong in the page so far, with a failed step
  await inSteps(() => errors.join('\n'), async step => {
    step('sign in and open the note')
    await page.goto(`${base}/notes/${diarized}`)
    expect(new URL(page.url()).pathname).toBe('/signin')
    await page.fill('input[name=email]', EMAIL)
    await page.fill('input[name=password]', PASSWORD)
    await Promise.all([page.waitForURL(`${base}/notes/${diarized}`), page.click('button[type=submit]')])
    await page.waitForSelector('#segments button.speaker-name')

    step('each turn opens with its speaker, in its own colour')
    // four segments, three turns: A, then B twice, then A
    expect(await turnNames(page)).toEqual(['Speaker A', 'Speaker B', 'Speaker A'])
    expect(await page.locator('#segments .seg').count()).toBe(4)
    const colour = (who: string) => page.locator(`#segments button.speaker-name[data-speaker=${who}]`).first().evaluate(e => getComputedStyle(e).color)
    expect(await colour('A')).not.toBe(await colour('B'))
    expect(await page.locator('#speaker-filter option').allTextContents()).toEqual(['All speakers', 'Speaker A', 'Speaker B'])
    await expect(page.locator('#summary').textContent()).resolves.toContain('Speaker A, Speaker B')
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await scan(page)

    step('Escape cancels a rename')
    // A mark on the window: it is still there after the rename, so the page was not reloaded.
    await page.evaluate(() => { (window as any).notReloaded = true })
    await page.focus('#segments button.speaker-name[data-speaker=A]')
    await page.keyboard.press('Enter')
    const input = page.locator('.speaker-rename input')
    await expect(input.evaluate(e => e === document.activeElement)).resolves.toBe(true)
    await expect(input.inputValue()).resolves.toBe('Speaker A')
    await input.fill('Not saved')
    await page.keyboard.press('Escape')
    expect(await page.locator('.speaker-rename').count()).toBe(0)
    expect(await turnNames(page)).toEqual(['Speaker A', 'Speaker B', 'Speaker A'])
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Speaker A')

    step('rename Speaker A to Maria: Enter saves')
    await page.keyboard.press('Enter')
    await input.fill('Maria')
    await scan(page)
    await Promise.all([
      page.waitForResponse(r => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/v1/notes/${diarized}/speakers/A`),
      page.keyboard.press('Enter'),
    ])
    await page.waitForFunction(() => document.getElementById('action-status')?.textContent === 'Speaker A is now Maria.')
    // every place the name shows: both of A's turns, the filter, the summary's attendees; B stays
    expect(await turnNames(page)).toEqual(['Maria', 'Speaker B', 'Maria'])
    expect(await page.locator('#speaker-filter option').allTextContents()).toEqual(['All speakers', 'Maria', 'Speaker B'])
    await expect(page.locator('#summary').textContent()).resolves.toContain('Maria, Speaker B')
    expect(await page.evaluate(() => (window as any).notReloaded)).toBe(true)
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Maria')

    step('the subtitles carry the name')
    const srt = await fetch(`${base}/v1/notes/${diarized}/transcript?format=srt`, { headers: { authorization: `Bearer ${key}` } })
    expect(srt.status).toBe(200)
    const subtitles = await srt.text()
    expect(subtitles).toContain('Maria: ')
    const cues = parseSubtitles(subtitles).filter(n => n.type === 'cue').map(c => (c.data as { text: string }).text.replace(/\n/g, ' '))
    expect(cues).toEqual([`Maria: ${A_SAID[0]}`, `Speaker B: ${B_SAID[0]}`, `Speaker B: ${B_SAID[1]}`, `Maria: ${A_SAID[1]}`])
    // and the page's download is that file
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-format=srt]')])
    expect(readFileSync((await download.path())!, 'utf8')).toBe(subtitles)
    const [vtt] = await Promise.all([page.waitForEvent('download'), page.click('a[data-format=vtt]')])
    const webvtt = readFileSync((await vtt.path())!, 'utf8')
    expect(webvtt).toContain(`<v Maria>${A_SAID[1]}`)
    expect(webvtt).toContain(`<v Speaker B>${B_SAID[1]}`)

    step('filter to one speaker')
    await page.selectOption('#speaker-filter', { label: 'Maria' })
    expect(await visibleTexts(page)).toEqual(A_SAID)
    await expect(page.locator('#speaker-shown').textContent()).resolves.toBe('Showing the 2 segments of Maria.')
    await page.selectOption('#speaker-filter', { label: 'Speaker B' })
    expect(await visibleTexts(page)).toEqual(B_SAID)
    await page.selectOption('#speaker-filter', { label: 'All speakers' })
    expect(await visibleTexts(page)).toEqual(SEGMENTS.map(s => s.text))
    await expect(page.locator('#speaker-shown').textContent()).resolves.toBe('')
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await scan(page)

    step('past the limit of remembered voices, the rename names the speaker and the page says the voice was not remembered')
    await page.goto(`${base}/notes/${withVoices}`)
    await page.waitForSelector('#segments button.speaker-name')
    await page.click('#segments button.speaker-name[data-speaker=A]')
    await page.locator('.speaker-rename input').fill('Ana')
    await Promise.all([
      page.waitForResponse(r => r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/v1/notes/${withVoices}/speakers/A`),
      page.keyboard.press('Enter'),
    ])
    await page.waitForFunction(() => document.getElementById('action-status')?.textContent?.startsWith('Speaker A is now Ana. Named, but the voice is not remembered: this account already remembers 500 voices'))
    expect(await turnNames(page)).toEqual(['Ana', 'Speaker B', 'Ana'])

    step('a remembered voice is suggested, not applied: "Clara?" confirmed names Speaker A')
    await page.goto(`${base}/notes/${suggested.confirm}`)
    await page.waitForSelector('#suggestions .suggestion')
    expect(await turnNames(page)).toEqual(['Speaker A', 'Speaker B', 'Speaker A'])
    await expect(page.locator('#suggestions').textContent()).resolves.toBe('Speaker A: Clara? (a voice this library remembers, 95 % alike)ConfirmDismiss')
    await scan(page)
    await page.click('#suggestions button.confirm')
    await page.waitForFunction(() => document.getElementById('action-status')?.textContent === 'Speaker A is now Clara.')
    expect(await turnNames(page)).toEqual(['Clara', 'Speaker B', 'Clara'])
    await expect(page.locator('#suggestions').isHidden()).resolves.toBe(true)
    await expect(page.locator('#summary').textContent()).resolves.toContain('Clara, Speaker B')

    step('dismissed: the name stays Speaker A and Clara is not offered again')
    await page.goto(`${base}/notes/${suggested.dismiss}`)
    await page.waitForSelector('#suggestions .suggestion')
    await page.click('#suggestions button.dismiss')
    await page.waitForFunction(() => document.getElementById('action-status')?.textContent === 'Clara dismissed for Speaker A; it is not suggested again for this note.')
    expect(await turnNames(page)).toEqual(['Speaker A', 'Speaker B', 'Speaker A'])
    await page.reload()
    await page.waitForSelector('#segments .seg')
    await expect(page.locator('#suggestions').isHidden()).resolves.toBe(true)

    step('a note without speakers shows none of it')
    await page.goto(`${base}/notes/${plain}`)
    await page.waitForSelector('#segments .seg')
    expect(await page.locator('#segments .seg .text').allTextContents()).toEqual(SEGMENTS.map(s => s.text))
    expect(await page.locator('#segments .speaker-name, #segments li.turn').count()).toBe(0)
    await expect(page.locator('#speaker-tools').isHidden()).resolves.toBe(true)
  })
  expect(errors).toEqual([])
  await context.close()
}, 90_000)

/** axe-core in the page: no violations of any impact. */
async function scan(page: Page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, target: v.nodes.map((n: any) => n.target) }))
  })
  expect(violations).toEqual([])
}
