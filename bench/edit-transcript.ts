#!/usr/bin/env bun
/**
 * Editing a two-hour transcript in Chromium (issue 31): a note of BENCH_WORDS words (20,000 by default)
 * in segments of about 12 words over two hours, each word with a confidence (about one in five below
 * the 0.7 of doubt), made as the pipeline makes a note (notes.createPending, saveTranscript, finish on
 * the SQLite database of a fresh data folder, without a recording: the words of an edit are then
 * timed in proportion, as they are when no engine can align them; bench/alignment.ts measures
 * alignment). Then a `serve` process on that folder, and headless Chromium signed in on the note's
 * page: the page's first render of the transcript (navigation to its first rows and to all of them, the
 * `transcript-first-rows` and `transcript-shown` marks, and the longest task meanwhile), then BENCH_EDITS (50) segments edited by keyboard (focus, Enter, End, type a
 * word, Enter): the time from Enter to the saved segment shown (the page's `segment-saved` measure),
 * and the PATCH's time on the server as the page's Resource Timing sees it; p50/p95 of each, and the
 * page's JS heap (CDP Runtime.getHeapUsage) after loading and after the edits.
 * Run: bun run bench/edit-transcript.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { seeding } from './list-notes'
import { freePort } from './notesvc-process'
import { percentile, revisionBytes, SECONDS, twoHourNote, twoHours } from './lib/two-hours'

const ROOT = resolve(import.meta.dir, '..')
const WORDS = Number(process.env.BENCH_WORDS ?? 20_000)
const EDITS = Number(process.env.BENCH_EDITS ?? 50)
const EMAIL = 'bench@example.com'
const PASSWORD = 'bench passphrase'

const dataDir = mkdtempSync(join(tmpdir(), 'notesvc-bench-edit-'))
const segments = twoHours(WORDS)
const noteId = await seeding(dataDir, async ({ services }) => {
  await services.web.setPassword(EMAIL, PASSWORD)
  return twoHourNote(services, { accountId: (await services.accounts.ensureAccount(EMAIL)).id, sandbox: false }, segments)
})
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const server = Bun.spawn(['bun', 'run', join(ROOT, 'src/cli.ts'), 'serve'], { cwd: ROOT, env: { ...process.env, PORT: String(port), NOTESVC_DATA_DIR: dataDir, NOTESVC_PUBLIC_URL: base, NOTESVC_LOG_LEVEL: 'warn', NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' }, stdout: 'ignore', stderr: 'inherit' })
const browser = await chromium.launch({ executablePath: process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] })
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/v1/health`).catch(() => null))?.ok) break
    if (i > 300) throw new Error('the server did not start')
    await Bun.sleep(100)
  }
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
  page.setDefaultTimeout(60_000)
  await page.goto(`${base}/signin?next=/`)
  await page.fill('input[name=email]', EMAIL)
  await page.fill('input[name=password]', PASSWORD)
  await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')])
  // the longest task of the page while it loads and renders the note
  await page.addInitScript(() => {
    (window as any).longest = 0
    new PerformanceObserver(list => { for (const e of list.getEntries()) (window as any).longest = Math.max((window as any).longest, e.duration) }).observe({ type: 'longtask', buffered: true })
  })
  await page.goto(`${base}/notes/${noteId}`)
  await page.waitForFunction(() => performance.getEntriesByName('transcript-shown').length > 0, undefined, { timeout: 120_000 })
  const render = await page.evaluate(() => ({ first: performance.getEntriesByName('transcript-first-rows')[0]!.startTime, shown: performance.getEntriesByName('transcript-shown')[0]!.startTime, longest: (window as any).longest, rows: document.querySelectorAll('#segments .seg').length, words: document.querySelectorAll('#segments .w').length }))
  const cdp = await page.context().newCDPSession(page)
  const heap = async () => { await cdp.send('HeapProfiler.collectGarbage'); return (await cdp.send('Runtime.getHeapUsage')).usedSize / 2 ** 20 }
  const domNodes = async () => (await cdp.send('Memory.getDOMCounters')).nodes
  const loadedHeap = await heap()
  console.log(`transcript: ${WORDS} words in ${segments.length} segments over ${SECONDS / 3600} h; the page shows ${render.rows} rows, ${render.words} words`)
  console.log(`first render: the first rows ${render.first.toFixed(0)} ms after navigation, all of them ${render.shown.toFixed(0)} ms; longest task ${render.longest.toFixed(0)} ms; JS heap ${loadedHeap.toFixed(1)} MiB, ${await domNodes()} DOM nodes`)

  const shown: number[] = []
  const patchMs: number[] = []
  for (let k = 0; k < EDITS; k++) {
    const i = Math.floor((k * segments.length) / EDITS)
    const before = await page.evaluate(() => performance.getEntriesByName('segment-saved').length)
    await page.locator(`#segments .seg[data-index="${i}"] > .text`).focus()
    await page.keyboard.press('Enter')
    await page.keyboard.press('End')
    await page.keyboard.type(' agreed')
    await page.keyboard.press('Enter')
    await page.waitForFunction(n => performance.getEntriesByName('segment-saved').length > n, before)
    const t = await page.evaluate(([n, idx]) => {
      const patch = performance.getEntriesByType('resource').filter(e => e.name.endsWith(`/segments/${idx}`)).at(-1) as PerformanceResourceTiming
      return { shown: performance.getEntriesByName('segment-saved')[n]!.duration, server: patch.responseEnd - patch.requestStart }
    }, [before, i] as const)
    shown.push(t.shown)
    patchMs.push(t.server)
  }
  console.log(`${EDITS} edits by keyboard, Enter to the saved segment shown: p50 ${percentile(shown, 50).toFixed(1)} ms, p95 ${percentile(shown, 95).toFixed(1)} ms, max ${Math.max(...shown).toFixed(1)} ms`)
  console.log(`  of which the PATCH (request sent to response read): p50 ${percentile(patchMs, 50).toFixed(1)} ms, p95 ${percentile(patchMs, 95).toFixed(1)} ms`)
  console.log(`JS heap after the edits: ${(await heap()).toFixed(1)} MiB, ${await domNodes()} DOM nodes`)
  const stored = revisionBytes(join(dataDir, 'notesvc.db'))
  console.log(`transcript_revisions: ${stored.rows} rows, ${(stored.bytes / 1024).toFixed(0)} KiB; ${(stored.bytes / Math.max(1, stored.rows - 1) / 1024).toFixed(1)} KiB per edit (version 0, the transcript as transcribed, counted in)`)
} finally {
  await browser.close()
  server.kill()
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
}
