import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, run, startServer, statusOnceProcessed, tempDir } from '../helpers/process'
import { writeTinyWhisperModel } from '../fixtures/ggml-model'
import { makeWav } from '../fixtures/wav'
import { sessionCookie } from '../helpers/web'

// The compiled binary, run from an empty folder with no node_modules anywhere near it.
const build = tempDir('notesvc-bin-')
const binary = join(build.path, 'notesvc')
const work = tempDir('notesvc-bin-run-')

beforeAll(async () => {
  const r = await run(['bun', 'run', 'scripts/build.ts', binary])
  if (r.code !== 0) throw new Error(`build failed: ${r.stderr}`)
}, 120_000)
afterAll(() => { build.remove(); work.remove() })

describe('dist/notesvc', () => {
  test('serves health, docs and validated routes from an empty folder, like the source', async () => {
    expect(existsSync(join(work.path, 'node_modules'))).toBe(false)
    // a model in ./models, where NOTESVC_ASR=auto looks first
    mkdirSync(join(work.path, 'models'))
    writeTinyWhisperModel(join(work.path, 'models', 'ggml-base.en.bin'), { multilingual: false })
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    // no NOTESVC_DATA_DIR: the per-user default, $XDG_DATA_HOME/notesvc
    const xdg = join(work.path, 'xdg')
    const server = await startServer([binary, 'serve'], `${base}/v1/health`, { cwd: work.path, env: { PORT: String(port), NOTESVC_DATA_DIR: '', XDG_DATA_HOME: xdg } })
    try {
      expect(await (await fetch(`${base}/v1/health`)).json()).toMatchObject({ status: 'ok', version: '1.1.0', engines: { asr: 'whisper' } })
      expect(existsSync(join(xdg, 'notesvc', 'notesvc.db'))).toBe(true)
      expect(existsSync(join(work.path, 'data'))).toBe(false)
      // validation survives compilation (plain --minify breaks it)
      const key = (await run([binary, 'keys', 'create', '--email', 'bin@example.com'], { cwd: work.path, env: { NOTESVC_DATA_DIR: '', XDG_DATA_HOME: xdg } })).stdout.trim()
      expect(key).toMatch(/^svc_live_/)
      const bad = await fetch(`${base}/v1/notes?limit=101`, { headers: { authorization: `Bearer ${key}` } })
      expect(bad.status).toBe(400)
      expect((await bad.json() as any).error.details[0].field).toBe('limit')
      const created = await fetch(`${base}/v1/notes`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: JSON.stringify({ title: 'from the binary', content: 'x' }) })
      expect(created.status).toBe(201)
      // the docs page and its script come from the binary itself
      const docs = await (await fetch(`${base}/docs`)).text()
      expect(docs).toContain('src="/docs/scalar.js"')
      const script = await fetch(`${base}/docs/scalar.js`)
      expect(script.status).toBe(200)
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
      const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as any
      expect(doc.paths['/v1/notes'].get.operationId).toBe('listNotes')
      // the MCP endpoint (the SDK is bundled too) and the pages
      expect(((await (await fetch(`${base}/.well-known/mcp.json`)).json()) as any).transport).toBe('streamable-http')
      const init = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bin-test', version: '1' } } }),
      })
      expect(init.status).toBe(200)
      expect(((await init.json()) as any).result.serverInfo.name).toBe('notesvc')
      const signin = await fetch(`${base}/signin`)
      expect(signin.status).toBe(200)
      // started by its path from another folder, the binary names itself by that path
      expect(await signin.text()).toContain(`<code>${binary} accounts password --email you@example.com</code>`)
      // the web library: `/` signed in, its script and style embedded in the binary
      const setPassword = Bun.spawn([binary, 'accounts', 'password', '--email', 'bin@example.com'], { cwd: work.path, env: { ...process.env, NOTESVC_DATA_DIR: '', XDG_DATA_HOME: xdg }, stdin: new TextEncoder().encode('binary passphrase\n'), stdout: 'ignore', stderr: 'ignore' })
      expect(await setPassword.exited).toBe(0)
      const session = await sessionCookie(base, request => fetch(request), 'bin@example.com', 'binary passphrase', '/')
      const library = await fetch(`${base}/`, { headers: { cookie: session } })
      expect(library.status).toBe(200)
      const html = await library.text()
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/library\.(?:js|css)\?v=\w+)"/g)].map(m => m[1]!)
      expect(assets.length).toBe(2)
      for (const path of assets) {
        const asset = await fetch(`${base}${path}`)
        expect(asset.status).toBe(200)
        expect((await asset.text()).length).toBeGreaterThan(5_000)
      }
    } finally {
      await server.stop()
    }
  })

  test('transcribes an upload end to end with whisper.cpp inside the binary (generated tiny model)', async () => {
    const data = tempDir('notesvc-bin-whisper-')
    try {
      const model = writeTinyWhisperModel(join(data.path, 'ggml-tiny-test.bin'), { multilingual: false })
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const env = { PORT: String(port), NOTESVC_DATA_DIR: data.path, NOTESVC_WHISPER_MODEL: model }
      const server = await startServer([binary, 'serve'], `${base}/v1/health`, { cwd: work.path, env })
      try {
        const key = (await run([binary, 'keys', 'create', '--email', 'w@example.com'], { cwd: work.path, env })).stdout.trim()
        const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
        const wav = makeWav({ seconds: 4, sampleRate: 22050, channels: 2 })
        const up = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers, body: JSON.stringify({ fileName: 'a.wav', contentType: 'audio/wav', styleId: 'transcript' }) })).json()) as any
        expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav as unknown as BodyInit })).status).toBe(200)
        expect((await fetch(`${base}/v1/uploads/${up.noteId}/complete`, { method: 'POST', headers })).status).toBe(202)
        const status = await statusOnceProcessed(async () => await (await fetch(`${base}/v1/notes/${up.noteId}/status`, { headers })).json(), 100, 600)
        // random weights make no sense of the audio, but loading, inference and segments ran
        expect(status).toMatchObject({ status: 'Done', errorCode: null })
        const note = (await (await fetch(`${base}/v1/notes/${up.noteId}`, { headers })).json()) as any
        expect(Array.isArray(note.structuredContent.transcript.segments)).toBe(true)
        for (const s of note.structuredContent.transcript.segments) expect(s.end).toBeLessThanOrEqual(4.01)
      } finally {
        await server.stop()
      }
    } finally {
      data.remove()
    }
  }, 120_000)

  test('CLI output matches the source', async () => {
    const [a, b] = await Promise.all([run([binary, 'version']), run(['bun', 'run', 'src/cli.ts', 'version'])])
    expect(a.stdout).toBe(b.stdout)
    const help = await run([binary, 'help'])
    expect(help.stdout).toContain('keys create --email E')
  })

  test('hints name the binary the way it was started, and that command works', async () => {
    const env = { NOTESVC_MODELS_DIR: work.path }
    const hint = async (cmd: string, cwd: string, extra: Record<string, string> = {}) =>
      (await run([cmd, 'models', 'list'], { cwd, env: { ...env, ...extra } })).stderr
    expect(await hint(binary, work.path)).toBe(`no models in ${work.path}; get one with: ${binary} models pull base.en\n`)
    expect(await hint('./notesvc', build.path)).toBe(`no models in ${work.path}; get one with: ./notesvc models pull base.en\n`)
    const path = { PATH: `${build.path}:${process.env.PATH}` }
    expect(await hint('notesvc', work.path, path)).toBe(`no models in ${work.path}; get one with: notesvc models pull base.en\n`)
    expect((await run(['sh', '-c', 'notesvc version'], { cwd: work.path, env: path })).stdout).toBe('1.1.0\n')
    expect((await run([binary, 'help'])).stdout).toContain(`Usage: ${binary} <command> [flags]`)
  })

  test('transcribe FILE --format srt runs from an empty folder, no server, like the source', async () => {
    const recording = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav'
    const r = await run([binary, 'transcribe', recording, '--format', 'srt'], { cwd: work.path, env: { NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DATA_DIR: join(work.path, 'transcribe-data') } })
    expect(r.code).toBe(0)
    // the reference: "he was not an ill disposed young man"
    expect(r.stdout).toMatch(/^1\n00:00:0\d,\d{3} --> 00:00:0\d,\d{3}\nhe was not an /)
    expect(r.stderr).toContain('100%')
    expect(existsSync(join(work.path, 'transcribe-data'))).toBe(false)
  })
})
