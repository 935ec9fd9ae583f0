import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp } from '../helpers/app'
import { freePort, ROOT, run, tempDir } from '../helpers/process'
import { makeWav } from '../fixtures/wav'

/**
 * The published build (packages/client/scripts/build.ts: dist/index.js and its declarations),
 * imported by `node` as a consumer's program would, against a server on loopback.
 */
const dir = tempDir('notesvc-client-node-')
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const t = createTestApp({ env: { NOTESVC_PUBLIC_URL: base } })
const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
afterAll(() => {
  server.stop(true)
  dir.remove()
})

const PROGRAM = `
import { createClient, NotFoundError } from './dist/index.js'
const [baseUrl, apiKey, sandboxKey, wavPath] = process.argv.slice(2)
const client = createClient({ baseUrl, apiKey })
const page = await client.listNotes({ limit: 10 })
const missing = await client.getNote({ id: 'note_missing' }).catch(e => e)
const sent = []
const uploaded = await createClient({ baseUrl, apiKey: sandboxKey }).uploadRecording({ file: wavPath, fileName: 'standup.wav', pollMs: 10, onUploadProgress: n => sent.push(n) })
console.log(JSON.stringify({
  titles: page.data.map(n => n.title), missing: [missing instanceof NotFoundError, missing.status, missing.code],
  upload: { status: uploaded.status, sent: sent.at(-1) },
}))
`

/** A consumer type-checked against the built declarations as Node resolves modules (relative imports need their extension there). */
const CONSUMER = `
import { createClient, NotFoundError } from './dist/index.js'
export async function titles(baseUrl: string, apiKey: string): Promise<string[]> {
  const client = createClient({ baseUrl, apiKey })
  const page = await client.listNotes({ limit: 10 })
  await client.getNote({ id: 'x' }).catch((e: unknown) => e instanceof NotFoundError)
  return page.data.map(n => n.title)
}
`

describe('the built client in node', () => {
  test('dist/index.js and dist/index.d.ts are built, with no node: import; node lists notes and uploads a file by its path with them, and tsc (NodeNext) accepts the declarations', async () => {
    const built = await run(['bun', 'packages/client/scripts/build.ts', '--out', join(dir.path, 'dist')])
    expect({ code: built.code, stderr: built.stderr }).toEqual({ code: 0, stderr: '' })
    const files = readdirSync(join(dir.path, 'dist'))
    expect(files).toContain('index.js')
    expect(files).toContain('index.d.ts')
    const bundle = readFileSync(join(dir.path, 'dist/index.js'), 'utf8')
    expect(bundle).not.toMatch(/from\s*["']node:/)
    expect(bundle).toMatch(/from\s*["']openapi-fetch["']/)
    expect(bundle).toMatch(/from\s*["']standardwebhooks["']/)

    const key = await t.key({ email: 'node@example.com' })
    for (const title of ['From node one', 'From node two']) {
      const res = await t.call('POST', '/v1/notes', { token: key, body: { title, content: 'x' } })
      expect(res.status).toBe(201)
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir.path, 'node_modules'))
    writeFileSync(join(dir.path, 'program.mjs'), PROGRAM)
    const wav = makeWav({ seconds: 2 })
    writeFileSync(join(dir.path, 'standup.wav'), wav)
    const ran = await run(['node', 'program.mjs', base, key, await t.key({ email: 'node@example.com', sandbox: true }), join(dir.path, 'standup.wav')], { cwd: dir.path })
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(ran.stdout)).toEqual({
      titles: ['From node two', 'From node one'], missing: [true, 404, 'not_found'],
      upload: { status: 'Done', sent: wav.length },
    })

    // the declarations are ES modules, as the published package.json says ("type": "module")
    const published = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as { type: string }
    writeFileSync(join(dir.path, 'package.json'), JSON.stringify({ type: published.type }))
    writeFileSync(join(dir.path, 'consumer.mts'), CONSUMER)
    const tsconfig = { compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [] }, files: ['consumer.mts'] }
    writeFileSync(join(dir.path, 'tsconfig.json'), JSON.stringify(tsconfig))
    const checked = await run(['bun', join(ROOT, 'node_modules/typescript5/bin/tsc'), '-p', 'tsconfig.json'], { cwd: dir.path })
    expect({ code: checked.code, output: checked.stdout + checked.stderr }).toEqual({ code: 0, output: '' })
  }, 60_000)
})
