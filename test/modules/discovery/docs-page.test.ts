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
