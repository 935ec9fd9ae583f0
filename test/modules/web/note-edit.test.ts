import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import axe from 'axe-core'
import mammoth from 'mammoth'
import { chromium, type Browser, type Page } from 'playwright-core'
import { apiClient, firstStartKey, freePort, ROOT, startServer, tempDir, until } from '../../helpers/process'
import { speechWav } from '../../fixtures/speech'
import { inSteps } from '../../helpers/web'

/**
 * Correcting a transcript on a note's page (issue 31), in headless Chromium against a real `serve`
 * process with PocketSphinx and the builtin summarizer, at a phone's 390 px and a desktop's 1280 px:
 * the words PocketSphinx heard with low confidence are marked (and say so to screen readers); a
 * segment corrected by keyboard only (Tab to it, Enter, type, Enter; Escape cancels); a word clicked
 * plays the recording from it; undo (Ctrl+Z) and redo; a stale edit (someone changed the transcript
 * through the API meanwhile) reloads and says so; the history restores a version; the summary is made
 * again in another style; the note downloads as DOCX and mammoth reads the correction back; find and
 * replace previews, then replaces only the segment chosen. axe-core
 * finds no violation in light and dark; screenshots to docs/screenshots/note-edit-*.png.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const EMAIL = 'editor@example.com'
const PASSWORD = 'an editing passphrase'
const SHOTS = join(ROOT, 'docs/screenshots')
/** The interface's threshold of doubt: a word below it is marked (src/engines/llm/builtin/doubt.ts says 0.7). */
const DOUBT = 0.7
/** What the first LibriVox clip says (pocketsphinx-testdata's transcription), to correct segment 0 to. */
const SAID = 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them'

const data = tempDir('notesvc-note-edit-')
let server: Awaited<ReturnType<typeof startServer>> | undefined
let browser: Browser | undefined
let base = ''
let serverSaid = ''
let call: ReturnType<typeof apiClient>
const notes: Record<number, string> = {}

type Word = { word: string; start: number; end: number; confidence?: number }
type Verbose = { segments: { id: number; start: number; end: number; text: string }[]; words: Word[] }

async function recordingNote(name: string): Promise<string> {
  const up = await call('POST', '/v1/uploads', { fileName: name, contentType: 'audio/wav' })
  const put = await fetch(up.body.uploadUrl, { method: 'PUT', headers: up.body.headers, body: Buffer.from(speechWav(12)) })
  expect(put.status).toBeLessThan(300)
  await put.arrayBuffer()
  expect((await call('POST', `/v1/uploads/${up.body.noteId}/complete`)).status).toBe(202)
  return up.body.noteId
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  const env = { NOTESVC_DATA_DIR: join(data.path, 'data'), PORT: String(port), NOTESVC_PUBLIC_URL: base, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off', NOTESVC_OWNER_EMAIL: EMAIL, NOTESVC_LOG_LEVEL: 'warn' }
  server = await startServer(['bun', 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, { env, timeoutMs: 30_000 })
  const key = await firstStartKey(server.proc.stdout as ReadableStream<Uint8Array>)
  void (async () => { for await (const chunk of server!.proc.stderr as ReadableStream<Uint8Array>) serverSaid = (serverSaid + new TextDecoder().decode(chunk)).slice(-4000) })()
  const proc = Bun.spawn(['bun', 'run', 'src/cli.ts', 'accounts', 'password', '--email', EMAIL], { cwd: ROOT, env: { ...process.env, ...env }, stdin: new TextEncoder().encode(PASSWORD + '\n'), stdout: 'pipe', stderr: 'pipe' })
  expect(await proc.exited).toBe(0)
  call = apiClient(base, key)
  for (const width of [390, 1280]) notes[width] = await recordingNote(`planning-call-${width}.wav`)
  for (const id of Object.values(notes)) {
    await until(`note ${id} is done`, async () => ((await call('GET', `/v1/notes/${id}/status`)).body.status === 'Done' ? true : null), 120_000, 200)
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  })
  mkdirSync(SHOTS, { recursive: true })
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  data.remove()
})

/** axe-core in the page, in light and in dark: no violation of any impact. */
async function noAxeViolations(page: Page) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source)
    const violations = await page.evaluate(async () => {
      const r = await (window as any).axe.run(document, { resultTypes: ['violations'] })
      return r.violations.map((v: any) => `${v.id}[${v.impact}] ${v.nodes.map((n: any) => n.target).join(' ')}`)
    })
    expect({ colorScheme, violations }).toEqual({ colorScheme, violations: [] })
  }
  await page.emulateMedia({ colorScheme: 'light' })
}

const segmentText = (page: Page, i: number) => page.locator(`#segments .seg[data-index="${i}"] > .text`).evaluate(e => {
  const copy = e.cloneNode(true) as HTMLElement
  copy.querySelectorAll('.sr-only').forEach(s => s.remove())
  return copy.textContent
})
const status = (page: Page) => page.locator('#action-status').textContent()
const verbose = async (id: string) => (await call('GET', `/v1/notes/${id}/transcript?format=verbose_json`)).body as Verbose
const waitForStatus = (page: Page, pattern: RegExp) => page.waitForFunction(p => new RegExp(p).test(document.getElementById('action-status')?.textContent ?? ''), pattern.source)

for (const width of [390, 1280]) {
  test(`correcting a transcript at ${width} px: doubt marked, keyboard editing, undo and redo, a stale edit, history, summarize again, DOCX`, async () => {
    const id = notes[width]!
    const heard = await verbose(id)
    const context = await browser!.newContext({ viewport: { width, height: width === 390 ? 844 : 800 }, acceptDownloads: true })
    const page = await context.newPage()
    page.setDefaultTimeout(30_000)
    const errors: string[] = []
    page.on('pageerror', e => errors.push(String(e)))
    // the stale edit's 412 is the one refused request the console reports
    page.on('console', m => { if (m.type() === 'error' && !/status of 412/.test(m.text())) errors.push(`${m.text()} (${m.location().url})`) })

    await inSteps(() => serverSaid, async step => {
      step('sign in and open the note')
      await page.goto(`${base}/signin?next=/notes/${id}`)
      await page.fill('input[name=email]', EMAIL)
      await page.fill('input[name=password]', PASSWORD)
      await Promise.all([page.waitForURL(`${base}/notes/${id}`), page.click('button[type=submit]')])
      await page.waitForSelector('#segments .seg')
      await page.waitForFunction(() => (document.getElementById('player') as HTMLMediaElement | null)?.readyState! >= 1)
      expect(await page.locator('#segments .seg').count()).toBe(heard.segments.length)

      step('the words heard with low confidence are marked, and say so to screen readers')
      const unsure = heard.words.filter(w => (w.confidence ?? 1) < DOUBT).map(w => w.word)
      expect(unsure.length).toBeGreaterThan(0) // PocketSphinx doubts some words of these clips
      const marked = await page.locator('#segments .w.doubt').evaluateAll(els => els.map(e => ({ word: e.firstChild!.textContent, sr: e.querySelector('.sr-only')?.textContent })))
      expect(marked.map(m => m.word)).toEqual(unsure)
      expect(new Set(marked.map(m => m.sr))).toEqual(new Set([' (unsure)']))
      await noAxeViolations(page)

      step('a word clicked plays the recording from its start (and opens its segment to edit; Escape closes it)')
      const word = heard.words.filter(w => w.start >= heard.segments[0]!.start && w.start < (heard.segments[1]?.start ?? Infinity))[2]!
      await page.locator('#segments .seg[data-index="0"] .w').nth(2).click()
      const at = await page.evaluate(() => (document.getElementById('player') as HTMLMediaElement).currentTime)
      expect(at).toBeGreaterThanOrEqual(word.start - 0.01)
      expect(at).toBeLessThan(word.start + 0.5)
      await page.evaluate(() => (document.getElementById('player') as HTMLMediaElement).pause())
      await expect(page.evaluate(() => document.activeElement?.tagName)).resolves.toBe('TEXTAREA')
      await page.keyboard.press('Escape')
      expect(await page.locator('.seg-editor').count()).toBe(0)

      step('keyboard only: Tab to the first segment, Enter, Escape cancels')
      await page.goto(`${base}/notes/${id}`)
      await page.waitForSelector('#segments .seg')
      let tabs = 0
      while (!(await page.evaluate(() => document.activeElement?.matches('.seg[data-index="0"] > .text')))) {
        await page.keyboard.press('Tab')
        expect(++tabs).toBeLessThan(40)
      }
      // the next Tab (past its play button) reaches the next segment's text
      await page.keyboard.press('Tab')
      await page.keyboard.press('Tab')
      if (heard.segments.length > 1) await expect(page.evaluate(() => document.activeElement?.matches('.seg[data-index="1"] > .text'))).resolves.toBe(true)
      await page.keyboard.press('Shift+Tab')
      await page.keyboard.press('Shift+Tab')
      await page.keyboard.press('Enter')
      const input = page.locator('#segments .seg[data-index="0"] textarea')
      await expect(input.evaluate(e => e === document.activeElement)).resolves.toBe(true)
      await page.keyboard.press('Control+A')
      await page.keyboard.type('not kept')
      await page.keyboard.press('Escape')
      expect(await segmentText(page, 0)).toBe(heard.segments[0]!.text)
      await expect(page.evaluate(() => document.activeElement?.matches('.seg[data-index="0"] > .text'))).resolves.toBe(true)

      step('keyboard only: Enter, the words said, Enter saves; the summary is marked stale')
      expect(await page.locator('#summary-stale').isHidden()).toBe(true)
      await page.keyboard.press('Enter')
      await page.keyboard.press('Control+A')
      await page.keyboard.type(SAID)
      await page.keyboard.press('Enter')
      await waitForStatus(page, /^Saved; the words are timed/)
      expect(await segmentText(page, 0)).toBe(SAID)
      // a person wrote them: none doubtful
      expect(await page.locator('#segments .seg[data-index="0"] .w.doubt').count()).toBe(0)
      expect((await verbose(id)).segments[0]!.text).toBe(SAID)
      await page.locator('#summary-stale').waitFor()
      await expect(page.locator('#undo').isEnabled()).resolves.toBe(true)
      await noAxeViolations(page)
      if (width === 1280) await page.screenshot({ path: join(SHOTS, 'note-edit-1280-light.png'), fullPage: false })

      step('Ctrl+Z outside a text field undoes; Redo brings the correction back')
      await page.locator('h1').click()
      await page.keyboard.press('Control+z')
      await waitForStatus(page, /^Undone/)
      expect(await segmentText(page, 0)).toBe(heard.segments[0]!.text)
      expect((await verbose(id)).segments[0]!.text).toBe(heard.segments[0]!.text)
      await page.click('#redo')
      await waitForStatus(page, /^Redone/)
      expect(await segmentText(page, 0)).toBe(SAID)
      // the history says which version each restore brought back: undo then redo survive a reload
      expect((await call('GET', `/v1/notes/${id}/revisions`)).body.data.map((r: any) => [r.version, r.restoredFrom])).toEqual([[3, 1], [2, 0], [1, null], [0, null]])
      await page.reload()
      await page.waitForSelector('#segments .seg')
      await page.waitForFunction(() => !(document.getElementById('undo') as HTMLButtonElement).disabled)
      await expect(page.locator('#redo').isDisabled()).resolves.toBe(true)

      step('someone else changes the transcript meanwhile: the page\'s edit gets 412, reloads and says so')
      const last = heard.segments.length - 1
      expect((await call('PATCH', `/v1/notes/${id}/segments/${last}`, { text: 'changed elsewhere' })).status).toBe(200)
      await page.locator(`#segments .seg[data-index="${last}"] > .text`).focus()
      await page.keyboard.press('Enter')
      await page.keyboard.press('Control+A')
      await page.keyboard.type('changed here')
      await page.keyboard.press('Enter')
      await waitForStatus(page, /reloaded/)
      expect(await status(page)).toBe('Someone changed this transcript meanwhile; reloaded. Your text was not saved: make the change again if it is still needed.')
      expect(await segmentText(page, last)).toBe('changed elsewhere')

      step('the history lists every version, who and what; Restore brings one back')
      await page.click('#history summary')
      const rows = page.locator('#revisions li.revision')
      await expect(rows.count()).resolves.toBe(5)
      await expect(rows.first().textContent()).resolves.toContain('Version 4')
      await expect(rows.first().textContent()).resolves.toContain('by an API key')
      await expect(rows.nth(1).textContent()).resolves.toContain('Restored version 1')
      await expect(rows.nth(3).textContent()).resolves.toContain('by you, in the browser')
      await expect(rows.last().textContent()).resolves.toContain('As transcribed')
      await noAxeViolations(page)
      await page.click('#revisions li[data-version="0"] button.restore')
      await waitForStatus(page, /^Version 0 restored\.$/)
      expect(await segmentText(page, 0)).toBe(heard.segments[0]!.text)
      expect(await segmentText(page, last)).toBe(heard.segments[last]!.text)
      // and once more to the correction, for the summary and the export below
      await page.click('#revisions li[data-version="4"] button.restore')
      await waitForStatus(page, /^Version 4 restored\.$/)
      expect(await segmentText(page, 0)).toBe(SAID)

      step('summarize again in another style: the price shown, what was charged, the stale marker gone')
      await expect(page.locator('#resummarize-go').textContent()).resolves.toBe('Summarize again (2 credits)')
      await page.selectOption('#resummarize-style', 'bulletpoints')
      await page.click('#resummarize-go')
      await page.waitForFunction(() => document.getElementById('resummarize-status')?.textContent?.startsWith('Summarized again.'))
      await expect(page.locator('#resummarize-status').textContent()).resolves.toBe('Summarized again. 2 credits charged.')
      await expect(page.locator('#summary-stale').isHidden()).resolves.toBe(true)
      const note = (await call('GET', `/v1/notes/${id}`)).body
      expect([note.styleId, note.summaryStale]).toEqual(['bulletpoints', false])
      expect(await page.locator('#summary .rendered li').allTextContents()).toEqual(note.structuredContent.bulletpoints.bullets)
      await noAxeViolations(page)
      if (width === 390) await page.screenshot({ path: join(SHOTS, `note-edit-390-light.png`), fullPage: true })
      await page.emulateMedia({ colorScheme: 'dark' })
      await page.screenshot({ path: join(SHOTS, `note-edit-${width}-dark.png`), fullPage: width === 390 })
      await page.emulateMedia({ colorScheme: 'light' })

      step('the note downloads as DOCX: its summary and the corrected transcript, read back by mammoth')
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-export=docx]')])
      expect(download.suggestedFilename()).toMatch(/\.docx$/)
      const text = (await mammoth.extractRawText({ buffer: readFileSync((await download.path())!) })).value
      expect(text).toContain(SAID)
      expect(text).toContain(note.structuredContent.bulletpoints.bullets[0])
      const [md] = await Promise.all([page.waitForEvent('download'), page.click('a[data-export=md]')])
      expect(readFileSync((await md.path())!, 'utf8')).toContain(SAID)

      step('find and replace: the preview lists each segment before and after, only the chosen one is replaced, in one undoable edit')
      const before = await verbose(id)
      // a letter, not a whole word: found in every segment, whatever PocketSphinx heard
      const withE = before.segments.filter(x => /e/i.test(x.text)).map(x => x.id)
      expect(withE.length).toBeGreaterThan(1)
      await page.click('#find-replace summary')
      await page.fill('#find-text', 'e')
      await page.fill('#replace-text', 'E')
      await page.uncheck('#whole-word')
      await page.click('#find-form button[type=submit]')
      await page.locator('#replace-matches li').first().waitFor()
      expect(await page.locator('#replace-matches input[type=checkbox]').evaluateAll(els => els.map(e => Number((e as HTMLInputElement).dataset.segment)))).toEqual(withE)
      await expect(page.locator('#replace-matches li del').first().textContent()).resolves.toBe(before.segments[withE[0]!]!.text)
      await expect(page.locator('#replace-matches li ins').first().textContent()).resolves.toBe(before.segments[withE[0]!]!.text.replace(/e/gi, 'E'))
      // nothing written by the preview
      expect((await verbose(id)).segments.map(x => x.text)).toEqual(before.segments.map(x => x.text))
      await noAxeViolations(page)
      if (width === 1280) await page.locator('#find-replace').screenshot({ path: join(SHOTS, 'note-edit-replace-1280-light.png') })
      for (const other of withE.slice(1)) await page.uncheck(`#replace-pick-${other}`)
      await page.click('#replace-chosen')
      await waitForStatus(page, /^Replaced/)
      const eCount = (before.segments[withE[0]!]!.text.match(/e/gi) ?? []).length
      expect(await status(page)).toBe(`Replaced ${eCount} ${eCount === 1 ? 'match' : 'matches'} in 1 segment.`)
      const after = await verbose(id)
      expect(after.segments.map(x => x.text)).toEqual(before.segments.map(x => (x.id === withE[0] ? x.text.replace(/e/gi, 'E') : x.text)))
      expect(await segmentText(page, withE[0]!)).toBe(after.segments[withE[0]!]!.text)
      await page.locator('h1').click()
      await page.keyboard.press('Control+z')
      await waitForStatus(page, /^Undone/)
      expect((await verbose(id)).segments.map(x => x.text)).toEqual(before.segments.map(x => x.text))
    })
    expect(errors).toEqual([])
    await context.close()
  }, 180_000)
}
