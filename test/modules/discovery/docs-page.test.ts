import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { createTestApp } from '../../helpers/app'

/**
 * The API reference at /docs in headless Chromium, opened on localhost, where Scalar shows its
 * hosted-service buttons unless told not to: none of them is on the page, and the page asks nothing
 * of any other server.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const HOSTED_SERVICE_BUTTONS = ['Ask AI', 'Generate MCP', 'Share', 'Deploy', 'Developer Tools']

let browser: Browser | undefined
let server: ReturnType<typeof Bun.serve> | undefined

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const t = createTestApp()
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
})

afterAll(async () => {
  await browser?.close()
  server?.stop(true)
})

test('the reference renders the operations without the hosted-service buttons, and calls no other server', async () => {
  const base = `http://localhost:${server!.port}`
  const page = await browser!.newPage()
  const elsewhere: string[] = []
  page.on('request', r => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) elsewhere.push(r.url())
  })
  await page.goto(`${base}/docs`)
  // the sidebar lists the operations once the document is loaded and the page is mounted
  await page.getByText('Liveness check').first().waitFor({ timeout: 15_000 })
  const shown: string[] = []
  for (const label of HOSTED_SERVICE_BUTTONS) if (await page.getByText(label, { exact: true }).count()) shown.push(label)
  expect(shown).toEqual([])
  expect(elsewhere).toEqual([])
}, 30_000)

/**
 * A page opened in Chromium with every Content-Security-Policy violation it reports collected (the
 * `securitypolicyviolation` event, which fires even for a blocked attempt the page survives, such as
 * an eval it falls back from) and every console error.
 */
async function openWatched(url: string) {
  const page = await browser!.newPage()
  const reported: string[] = []
  page.on('console', m => {
    if (m.type() === 'error') reported.push(`console: ${m.text().slice(0, 200)}`)
  })
  page.on('pageerror', e => reported.push(`page error: ${e.message.slice(0, 200)}`))
  await page.exposeFunction('reportViolation', (v: string) => reported.push(`violation: ${v}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', e => (window as unknown as { reportViolation(v: string): void }).reportViolation(`${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`))
  })
  const response = await page.goto(url)
  return { page, reported, response: response! }
}

test('the reference renders under its Content-Security-Policy with no violation: no eval, scripts from this server only', async () => {
  const base = `http://localhost:${server!.port}`
  const { page, reported, response } = await openWatched(`${base}/docs`)
  const csp = response.headers()['content-security-policy'] ?? ''
  expect(csp).toContain("script-src 'self'")
  expect(csp).not.toContain('unsafe-eval')
  expect(response.headers()['x-frame-options']).toBe('DENY')
  expect(response.headers()['x-content-type-options']).toBe('nosniff')
  await page.getByText('Liveness check').first().waitFor({ timeout: 15_000 })
  // an operation opened from the sidebar: Scalar renders more of the page, with more of its styles
  await page.getByText('Liveness check').first().click()
  await page.getByText('/v1/health').first().waitFor({ timeout: 15_000 })
  expect(reported).toEqual([])
}, 30_000)

test('the errors page is styled under its policy (its one style element by hash), with no violation', async () => {
  const { page, reported, response } = await openWatched(`http://localhost:${server!.port}/docs/errors#not_found`)
  expect(response.headers()['content-security-policy']).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'/)
  // the row the link points at is highlighted by the page's style
  expect(await page.locator('tr#not_found').evaluate(el => getComputedStyle(el).backgroundColor)).toBe('rgb(255, 246, 204)')
  expect(reported).toEqual([])
}, 30_000)
