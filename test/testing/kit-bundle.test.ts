import { afterAll, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as clientPackage from '@notesvc/client'
import { ROOT, run, tempDir } from '../helpers/process'

const packageHasClient = typeof (clientPackage as unknown as Record<string, unknown>).createClient === 'function'

/**
 * `@notesvc/client/testing` as an application gets it: scripts/build-testing.ts's bundle in
 * node_modules/@notesvc/client/dist/testing of a folder outside the repository (no tsconfig paths,
 * no source beside it), next to the client's own build and the package's dependencies. A script
 * there starts a kit, uploads with the sandbox key, searches (no read thread in a bundle), waits for
 * the webhook, fetches the API reference's script (the one file written beside the bundle) and stops.
 */
const app = tempDir('notesvc-kit-bundle-')
afterAll(() => app.remove())

const USE_KIT = `
import { startNotesvc } from '@notesvc/client/testing'
const kit = await startNotesvc()
const call = async (method, path, key, body) => {
  const res = await fetch(kit.url + path, { method, headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' }, body: body && JSON.stringify(body) })
  return { status: res.status, body: await res.json() }
}
const health = (await fetch(kit.url + '/v1/health')).status
const created = await call('POST', '/v1/uploads', kit.sandboxKey, { fileName: 'standup.wav', contentType: 'audio/wav' })
await fetch(created.body.uploadUrl, { method: 'PUT', headers: created.body.headers, body: new Uint8Array(64) })
const completed = await call('POST', '/v1/uploads/' + created.body.noteId + '/complete', kit.sandboxKey)
const event = await kit.webhooks.next('note.completed')
const note = await call('GET', '/v1/notes/' + created.body.noteId, kit.sandboxKey)
const word = JSON.stringify(note.body.summary).split(/\\W+/).find(w => w.length > 5)
const found = await call('GET', '/v1/notes?q=' + encodeURIComponent(word), kit.sandboxKey)
// the kit's client is the installed @notesvc/client's (the one the application imports)
let viaClient
try { viaClient = (await kit.sandboxClient.listNotes()).data.map(n => n.id) } catch (e) { viaClient = e.message }
const scalar = await fetch(kit.url + '/docs/scalar.js', { headers: { 'accept-encoding': 'gzip' } })
const scalarBytes = (await scalar.arrayBuffer()).byteLength
await kit.stop()
let refused = false
try { await fetch(kit.url + '/v1/health') } catch { refused = true }
console.log(JSON.stringify({ health, completed: completed.status, noteId: created.body.noteId, eventNoteId: event.data.noteId, found: found.body.data.map(n => n.id), viaClient, scalar: scalar.status, scalarBytes, refused }))
`

test('the bundled kit, installed in a folder of its own, starts a server that uploads, searches, sends webhooks and stops', async () => {
  const pkg = join(app.path, 'node_modules/@notesvc/client')
  mkdirSync(join(pkg, 'dist'), { recursive: true })
  copyFileSync(join(ROOT, 'packages/client/package.json'), join(pkg, 'package.json'))
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  // the client's entry point, built from its source (piece A's own build makes the published one)
  const client = await Bun.build({ entrypoints: [join(ROOT, 'packages/client/src/index.ts')], outdir: join(pkg, 'dist'), target: 'browser', format: 'esm', external: Object.keys(manifest.dependencies) })
  expect(client.success).toBe(true)
  const built = await run([process.execPath, 'run', 'scripts/build-testing.ts', join(pkg, 'dist/testing')])
  expect(built.stderr).toContain('built the test kit')
  expect(built.code).toBe(0)
  expect(existsSync(join(pkg, 'dist/testing/index.d.ts'))).toBe(true)
  // the package's dependencies, as an install puts them beside it
  for (const dep of Object.keys(manifest.dependencies)) symlinkSync(join(ROOT, 'node_modules', dep), join(app.path, 'node_modules', dep))
  writeFileSync(join(app.path, 'use-kit.mjs'), USE_KIT)

  const used = await run([process.execPath, 'run', 'use-kit.mjs'], { cwd: app.path })
  expect(used.stderr).toBe('')
  expect(used.code).toBe(0)
  const seen = JSON.parse(used.stdout)
  // (the placeholder @notesvc/client of issue 34's set-up has no createClient: then the kit says so when its client is used)
  const viaClient = packageHasClient ? [seen.noteId] : "kit.client.listNotes: the installed @notesvc/client has no createClient; install the @notesvc/client of the kit's own version"
  expect(seen).toEqual({ health: 200, completed: 202, noteId: seen.noteId, eventNoteId: seen.noteId, found: [seen.noteId], viaClient, scalar: 200, scalarBytes: seen.scalarBytes, refused: true })
  expect(seen.scalarBytes).toBeGreaterThan(100_000)
})
