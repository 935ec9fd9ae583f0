import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { createTestApp } from '../helpers/app'
import { freePort, ROOT } from '../helpers/process'
import { inSteps } from '../helpers/web'
import { makeWav } from '../fixtures/wav'

/**
 * @notesvc/client in headless Chromium (Debian's `chromium` package): src/index.ts bundled for the
 * browser with its dependencies inside, as a web app's bundler would, loaded by a page that creates
 * and pages through notes, catches a NotFoundError and uploads a WAV Blob with a sandbox key.
 *
 * One loopback server serves the page, the bundle and the recording, and forwards /v1/* to a complete
 * app: the page and the API share one origin because the API sends no CORS headers (a page of another
 * origin could not read its answers). The upload's signed URL is on that origin too (the app's public
 * URL is the server's), so the PUT goes through it as well.
 */
const CHROMIUM = process.env.NOTESVC_CHROMIUM ?? '/usr/bin/chromium'
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
const t = createTestApp({ env: { NOTESVC_PUBLIC_URL: origin } })
const wav = new Uint8Array(makeWav({ seconds: 2 }))

/** Each /v1 request the page made, as the forwarding server saw it and its answer. */
interface Forwarded { method: string; path: string; status: number; requestId: string | null }
const forwarded: Forwarded[] = []

// The page's own script: everything the client does runs here, in Chromium, and what it saw is put in
// window.__results for the test to read (or window.__failure, with the error's name and message).
const APP = `
import { createClient, NotesvcError, NotFoundError } from '/client.js'
try {
  const apiKey = document.querySelector('meta[name=api-key]').content
  const client = createClient({ baseUrl: location.origin, apiKey, retry: false })
  const created = []
  for (const title of ['First', 'Second', 'Third']) created.push(await client.createNote({ title, content: 'Written in a browser.' }))
  const listed = []
  for await (const note of client.paginate.listNotes({ limit: 2 })) listed.push(note.id)
  const missing = await client.getNote({ id: 'note_missing' }).then(() => null, e => e)
  const recording = await (await fetch('/standup.wav')).blob()
  const progress = []
  const statuses = []
  const uploaded = await client.uploadRecording({
    file: recording, fileName: 'standup.wav', pollMs: 10,
    onUploadProgress: (sent, total) => progress.push([sent, total]),
    onStatus: s => statuses.push(s.status),
  })
  window.__results = {
    created: created.map(n => ({ id: n.id, title: n.title, status: n.status })),
    listed,
    missing: missing && {
      isNotFound: missing instanceof NotFoundError, isNotesvcError: missing instanceof NotesvcError,
      name: missing.name, code: missing.code, status: missing.status, requestId: missing.requestId, message: missing.message,
    },
    recordingType: recording.type, recordingSize: recording.size,
    upload: { id: uploaded.id, status: uploaded.status, transcript: uploaded.originalTranscription, progress, lastStatus: statuses.at(-1) },
  }
} catch (e) {
  window.__failure = { name: e?.name, message: String(e?.message ?? e) }
}
`

/**
 * Bun's browser target quietly replaces an import of a Node built-in with an empty object, where a web
 * app's bundler (webpack 5, esbuild for the browser) refuses it: this plugin refuses it the same way,
 * so a static `node:fs` import in the client fails the build here as it would there. The client's
 * own dynamic import of node:fs (upload.ts, by a name bundlers leave alone) is not resolved at all.
 */
const NODE_BUILTIN = new RegExp(`^(node:.*|${builtinModules.map(m => m.replace(/[/.]/g, '\\$&')).join('|')})$`)
const refuseNodeBuiltins: Bun.BunPlugin = {
  name: 'refuse-node-builtins',
  setup(build) {
    build.onResolve({ filter: NODE_BUILTIN }, ({ path, importer }) => {
      throw new Error(`${importer} imports ${path}, a Node built-in no browser has: import it only where it runs (Bun, Node)`)
    })
  },
}

let bundle = ''
let server: ReturnType<typeof Bun.serve> | undefined
let browser: Browser | undefined
let pageKey = ''

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with DEBIAN_FRONTEND=noninteractive apt-get install -y chromium`)
  // In memory, nothing external: openapi-fetch and standardwebhooks end up in the one file, as in a web app.
  const built = await Bun.build({ entrypoints: [join(ROOT, 'packages/client/src/index.ts')], target: 'browser', format: 'esm', plugins: [refuseNodeBuiltins], throw: false })
  if (!built.success) throw new AggregateError(built.logs, `Bun.build of the client for the browser failed: ${built.logs.join('\n')}`)
  bundle = await built.outputs[0]!.text()
  pageKey = await t.key({ email: 'browser@example.com', sandbox: true })

  server = Bun.serve({
    port, hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      if (url.pathname.startsWith('/v1/')) {
        const response = await t.app.handle(request)
        forwarded.push({ method: request.method, path: url.pathname + url.search, status: response.status, requestId: response.headers.get('x-request-id') })
        return response
      }
      if (url.pathname === '/') {
        return new Response(`<!doctype html><html><head><meta charset="utf-8"><meta name="api-key" content="${pageKey}"><title>client</title></head>`
          + '<body><script type="module" src="/app.js"></script></body></html>', { headers: { 'content-type': 'text/html; charset=utf-8' } })
      }
      if (url.pathname === '/client.js') return new Response(bundle, { headers: { 'content-type': 'text/javascript' } })
      if (url.pathname === '/app.js') return new Response(APP, { headers: { 'content-type': 'text/javascript' } })
      if (url.pathname === '/standup.wav') return new Response(wav, { headers: { 'content-type': 'audio/wav' } })
      return new Response('not here', { status: 404 })
    },
  })

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  server?.stop(true)
})

test('the client bundled for the browser creates, pages, catches a NotFoundError and uploads a Blob in Chromium', async () => {
  const pageErrors: string[] = []
  await inSteps(() => [...pageErrors, ...forwarded.map(f => `${f.method} ${f.path} ${f.status}`)].join('\n'), async step => {
    step('the bundle')
    // what a browser cannot load: an import of a Node built-in or of a package left outside the file
    expect(bundle).not.toMatch(/^\s*import\b[^;]*\bfrom\s*["'](node:|openapi-fetch|standardwebhooks)/m)

    step('open the page')
    const page = await browser!.newPage()
    page.setDefaultTimeout(45_000)
    page.on('pageerror', e => pageErrors.push(String(e)))
    // script errors count; the favicon's 404 and the unknown note's (which the script catches) do not
    page.on('console', m => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(m.text()) })
    await page.goto(`${origin}/`)

    step('the page\'s script runs')
    await page.waitForFunction(() => (window as any).__results ?? (window as any).__failure, null, { timeout: 45_000 })
    const failure = await page.evaluate(() => (window as any).__failure ?? null)
    expect(failure).toBeNull()
    const results = await page.evaluate(() => (window as any).__results)
    expect(pageErrors).toEqual([])

    step('created and listed')
    expect(results.created.map((n: { title: string; status: string }) => [n.title, n.status])).toEqual([['First', 'Done'], ['Second', 'Done'], ['Third', 'Done']])
    // three notes at two a page: the iterator went on to a second page and gave each note once
    expect([...results.listed].sort()).toEqual(results.created.map((n: { id: string }) => n.id).sort())
    expect(forwarded.filter(f => f.method === 'GET' && f.path.startsWith('/v1/notes?')).map(f => [new URL(f.path, origin).searchParams.get('offset') ?? '0', f.status]))
      .toEqual([['0', 200], ['2', 200]])

    step('the NotFoundError')
    const missing = forwarded.find(f => f.method === 'GET' && f.path === '/v1/notes/note_missing')!
    expect(missing.status).toBe(404)
    expect(missing.requestId).toMatch(/\S/)
    expect(results.missing).toMatchObject({ isNotFound: true, isNotesvcError: true, name: 'NotFoundError', code: 'not_found', status: 404, requestId: missing.requestId })
    expect(results.missing.message).toContain('note_missing')

    step('the upload')
    expect([results.recordingType, results.recordingSize]).toEqual(['audio/wav', wav.length])
    expect(results.upload).toMatchObject({ status: 'Done', lastStatus: 'Done' })
    expect(results.upload.transcript).toMatch(/\S/)
    // a Blob goes whole from a browser: its progress once, at the end (packages/client/README.md)
    expect(results.upload.progress).toEqual([[wav.length, wav.length]])
    // createUpload, the PUT of the file to the signed URL on this origin, completeUpload, then the status until Done
    const id = results.upload.id
    expect(forwarded.find(f => f.method === 'POST' && f.path === '/v1/uploads')?.status).toBe(201)
    expect(forwarded.find(f => f.method === 'PUT')?.status).toBeLessThan(300)
    expect(forwarded.find(f => f.method === 'POST' && f.path === `/v1/uploads/${id}/complete`)?.status).toBeLessThan(300)
    expect(forwarded.filter(f => f.path === `/v1/notes/${id}/status`).every(f => f.status === 200)).toBe(true)
    await page.close()
  })
}, 90_000)
