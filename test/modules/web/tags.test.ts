import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import axe from 'axe-core'
import type { Server } from 'bun'
import { chromium, type Browser, type Page } from 'playwright-core'
import { listen, type Fetching } from '../../../src/http/listen'
import { freePort } from '../../helpers/process'
import { createWebTestApp, inSteps, type WebTestApp } from '../../helpers/web'

/**
 * Tags in headless Chromium (Debian's `chromium`), against the app served over HTTP from this process:
 * the library's rows show their tags; clicking a row's tag filters the list by it, a second tag
 * narrows it to the notes carrying both, and taking one off the filter widens it again; on a note's
 * page a tag is added (its name shown as text, never as markup) and removed, and a tag suggested from
 * the summary's topics is shown as a suggestion and applied only when accepted. axe-core scans both
 * pages: no violations. At 1280 px, then the note page at 390 px (nothing wider than the screen).
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'tagger@example.com'
const PASSWORD = 'a tagging passphrase'
const HOSTILE = '<img src=x onerror="window.hacked=1">'

let t: WebTestApp
let server: Server<unknown> | undefined
let browser: Browser | undefined
let base = ''
let key = ''
const ids: Record<string, string> = {}

async function lib() {
  return { accountId: (await t.services.accounts.ensureAccount(EMAIL)).id, sandbox: false }
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  t = createWebTestApp({ env: { NOTESVC_PUBLIC_URL: base } })
  await t.web().setPassword(EMAIL, PASSWORD)
  key = (await t.services.accounts.createKey({ email: EMAIL, scopes: ['notes:read'] })).key
  const library = await lib()
  // oldest first, so the list shows them newest first: planning, budget, standup
  for (const [name, tags] of [['standup', ['alpha']], ['budget', ['alpha', 'beta']], ['planning', ['beta']]] as const) {
    ids[name] = (await t.services.notes.create(library, { title: `The ${name} note`, content: `Notes of the ${name}.` })).id
    await t.services.tags.add(library, ids[name]!, tags)
    await Bun.sleep(5)
  }
  // a processed note whose summary has topics: suggestions
  const pending = await t.services.notes.createPending(library, { title: 'review.wav', type: 'audio', styleId: 'note', language: null, source: 'upload', stage: 'transcribing' })
  await t.services.notes.finish(pending.id, {
    title: 'Quarterly review', summary: 'The review.', transcript: 'We reviewed the quarter.', language: 'en',
    structuredContent: { note: { summary: 'The review.', sections: [{ heading: 'Revenue and hiring', points: ['Revenue grew.'] }] } },
  })
  ids.review = pending.id
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

async function scan(page: Page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, target: v.nodes.map((n: any) => n.target) }))
  })
  expect(violations).toEqual([])
}

/** The titles of the listed notes, once the list shows `count` of them. */
async function titles(page: Page, count: number) {
  await page.waitForFunction(n => document.querySelectorAll('#notes li.note').length === n && document.getElementById('notes')?.getAttribute('aria-busy') === 'false', count)
  return page.locator('#notes .note-title').allTextContents()
}

const noteTags = async (id: string) => ((await (await fetch(`${base}/v1/notes/${id}/tags`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { name: string }[]; suggestedTags: string[] })

test('tags in the browser: chips on rows filter the list (two tags: notes with both), a note\'s tags added, removed, and a suggestion accepted', async () => {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const errors: string[] = []
  page.on('pageerror', e => errors.push(String(e)))
  page.on('console', m => { if (m.type() === 'error' && !/^\/notes\/[^/]+\/media$/.test(new URL(m.location().url || 'about:blank').pathname)) errors.push(`${m.text()} (${m.location().url})`) })
  await inSteps(() => errors.join('\n'), async step => {
    step('sign in: every row shows its tags')
    await page.goto(`${base}/`)
    await page.fill('input[name=email]', EMAIL)
    await page.fill('input[name=password]', PASSWORD)
    await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')])
    expect(await titles(page, 4)).toEqual(['Quarterly review', 'The planning note', 'The budget note', 'The standup note'])
    const rowTags = (id: string) => page.locator(`li.note[data-note-id="${id}"] .tags .tag-chip`).allTextContents()
    expect(await rowTags(ids.budget!)).toEqual(['alpha', 'beta'])
    expect(await rowTags(ids.standup!)).toEqual(['alpha'])
    expect(await page.locator(`li.note[data-note-id="${ids.review}"] .tags`).count()).toBe(0)
    await scan(page)

    step('a row\'s tag filters the list; a second tag narrows it to notes with both; one taken off widens it')
    await page.click(`li.note[data-note-id="${ids.standup}"] button.tag-chip[data-tag=alpha]`)
    expect(await titles(page, 2)).toEqual(['The budget note', 'The standup note'])
    expect(new URL(page.url()).searchParams.getAll('tag')).toEqual(['alpha'])
    await page.click(`li.note[data-note-id="${ids.budget}"] button.tag-chip[data-tag=beta]`)
    expect(await titles(page, 1)).toEqual(['The budget note'])
    expect(new URL(page.url()).searchParams.getAll('tag')).toEqual(['alpha', 'beta'])
    expect(await page.locator('#tag-filter .tag-chip').allTextContents()).toEqual(['alpha', 'beta'])
    await page.click('#tag-filter button[aria-label="Remove the tag alpha"]')
    expect(await titles(page, 2)).toEqual(['The planning note', 'The budget note'])
    // the filter is in the address: a reload keeps it
    await page.reload()
    expect(await titles(page, 2)).toEqual(['The planning note', 'The budget note'])
    await scan(page)

    step('a note\'s page: a tag added (shown as text), then removed')
    await page.goto(`${base}/notes/${ids.review}`)
    await page.waitForSelector('#tag-suggestions button.tag-suggestion')
    expect(await page.locator('#note-tags').textContent()).toBe('No tags yet.')
    await page.fill('#tag-input', HOSTILE)
    await page.click('#tag-form button[type=submit]')
    await page.waitForFunction(() => document.getElementById('tag-status')?.textContent?.startsWith('Added'))
    expect(await page.locator('#note-tags .tag-chip').allTextContents()).toEqual([HOSTILE])
    expect(await page.evaluate(() => (window as any).hacked)).toBeUndefined()
    expect((await noteTags(ids.review!)).data.map(x => x.name)).toEqual([HOSTILE])
    await page.click(`#note-tags button[aria-label="Remove the tag ${HOSTILE.replace(/"/g, '\\"')}"]`)
    await page.waitForFunction(() => document.getElementById('tag-status')?.textContent?.startsWith('Removed'))
    expect((await noteTags(ids.review!)).data).toEqual([])

    step('the summary\'s topics are suggestions, applied only when accepted')
    expect(await page.locator('#tag-suggestions button.tag-suggestion').allTextContents()).toEqual(['+ revenue', '+ hiring'])
    expect((await noteTags(ids.review!)).data).toEqual([])
    await scan(page)
    await page.click('#tag-suggestions button[data-tag=hiring]')
    await page.waitForFunction(() => document.querySelectorAll('#note-tags .tag-chip').length === 1)
    expect(await page.locator('#note-tags .tag-chip').allTextContents()).toEqual(['hiring'])
    expect(await page.locator('#tag-suggestions button.tag-suggestion').allTextContents()).toEqual(['+ revenue'])
    const after = await noteTags(ids.review!)
    expect([after.data.map(x => x.name), after.suggestedTags]).toEqual([['hiring'], ['revenue']])

    step('a name too long: the page says what to do, nothing is added')
    await page.fill('#tag-input', 'x'.repeat(50))
    await page.evaluate(() => { (document.getElementById('tag-input') as HTMLInputElement).maxLength = 100 })
    await page.fill('#tag-input', 'y'.repeat(60))
    await page.click('#tag-form button[type=submit]')
    await page.waitForFunction(() => /longer than 50 characters/.test(document.getElementById('tag-status')?.textContent ?? ''))
    expect((await noteTags(ids.review!)).data.map(x => x.name)).toEqual(['hiring'])
    // the refused request is the browser's console error of that step, and the only one
    expect(errors.map(e => e.replace(/\/v1\/notes\/\w+\//, '/v1/notes/{id}/'))).toEqual([`Failed to load resource: the server responded with a status of 400 (Bad Request) (${base}/v1/notes/{id}/tags)`])
    errors.length = 0

    step('at 390 px the note\'s tags fit the screen')
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(errors).toEqual([])
  })
  await context.close()
}, 120_000)
