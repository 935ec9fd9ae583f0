import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { diarizationModelPaths } from '../../src/engines/diarization/models'
import { freePort, ROOT, run, startServer, statusOnceProcessed, tempDir } from '../helpers/process'
import { writeTinyWhisperModel } from '../fixtures/ggml-model'
import { writeTinyDiarizationModels } from '../fixtures/onnx-model'
import { makeWav } from '../fixtures/wav'
import { sessionCookie } from '../helpers/web'

// The compiled binary, run from an empty folder with no node_modules anywhere near it.
const build = tempDir('notesvc-bin-')
const binary = join(build.path, 'notesvc')
const work = tempDir('notesvc-bin-run-')

let buildStderr = ''

beforeAll(async () => {
  const r = await run(['bun', 'run', 'scripts/build.ts', binary])
  if (r.code !== 0) throw new Error(`build failed: ${r.stderr}`)
  buildStderr = r.stderr
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

  test('knows every speech engine and storage back end the source registers: doctor on NOTESVC_ASR=remote and NOTESVC_STORAGE=s3, and the names a bad value is told', async () => {
    const port = await freePort()
    const env = {
      NOTESVC_DATA_DIR: join(work.path, 'registered'), NOTESVC_LLM: 'builtin', NOTESVC_MODELS_URL: 'http://127.0.0.1:9',
      NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: `http://127.0.0.1:${port}/v1`, NOTESVC_STORAGE: 's3', NOTESVC_S3_BUCKET: 'recordings',
    }
    const [bin, src] = await Promise.all([run([binary, 'doctor'], { cwd: work.path, env }), run(['bun', 'run', 'src/cli.ts', 'doctor'], { env })])
    const lines = (out: string) => out.split('\n').filter(l => / (storage|speech server|speech engine) /.test(l))
    expect(lines(bin.stdout)).toEqual(lines(src.stdout))
    const [storage, server, engine] = lines(bin.stdout)
    expect(storage).toBe('ok       storage        s3 bucket recordings')
    expect(server).toStartWith(`missing  speech server  http://127.0.0.1:${port}/v1: it cannot be reached (`)
    expect(engine).toBe(`ok       speech engine  remote, http://127.0.0.1:${port}/v1, model whisper-1 (NOTESVC_ASR=remote)`)
    const refused = async (variable: string) => (await run([binary, 'serve'], { cwd: work.path, env: { NOTESVC_DATA_DIR: join(work.path, 'registered'), [variable]: 'nope' } })).stderr
    expect(await refused('NOTESVC_ASR')).toContain('NOTESVC_ASR=nope is not valid; use one of: auto, whisper, pocketsphinx, remote')
    expect(await refused('NOTESVC_STORAGE')).toContain('NOTESVC_STORAGE=nope is not valid; use one of: disk, s3')
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

// The large files the build packs (issue 30: the binary had grown to 159.2 MB), with their packages' paths.
const PACKED_FILES: [path: string, codec: string][] = [
  ['node_modules/sherpa-onnx-linux-x64/libonnxruntime.so', 'zstd'],
  ['node_modules/sherpa-onnx-linux-x64/libsherpa-onnx-c-api.so', 'zstd'],
  ['node_modules/sherpa-onnx-linux-x64/sherpa-onnx.node', 'zstd'],
  ['node_modules/@fugood/node-whisper-linux-x64/index.node', 'zstd'],
  ['node_modules/@scalar/api-reference/dist/browser/standalone.js', 'gzip'],
]

describe('dist/notesvc: its size', () => {
  test('stays within 130 MB (MiB, as the build prints it)', () => {
    expect(statSync(binary).size).toBeLessThanOrEqual(130 * 1024 * 1024)
  })

  test('the build prints what each part costs, and the parts add up to the binary', () => {
    const rows = [...buildStderr.matchAll(/^ {2}(.+?) {2,}([\d,]+)$/gm)].map(m => ({ part: m[1]!, bytes: Number(m[2]!.replaceAll(',', '')) }))
    const total = rows.at(-1)!
    expect(total).toEqual({ part: 'total', bytes: statSync(binary).size })
    expect(rows.slice(0, -1).reduce((n, r) => n + r.bytes, 0)).toBe(total.bytes)
    const parts = rows.map(r => r.part)
    expect(parts[0]).toStartWith('Bun runtime')
    expect(parts).toContainEqual(expect.stringContaining('bytecode'))
    expect(parts).toContainEqual(expect.stringMatching(/^JavaScript: @aws-sdk/))
    // each large file embedded packed, smaller than on disk
    for (const [path, codec] of PACKED_FILES) {
      const size = statSync(join(ROOT, path)).size
      const row = rows.find(r => r.part === `embedded: ${path} (${codec}; ${size.toLocaleString('en')} unpacked)`)
      expect({ path, packed: row !== undefined && row.bytes < size }).toEqual({ path, packed: true })
    }
  })
})

describe('dist/notesvc: the packed files unpack', () => {
  test('sherpa-onnx diarizes an upload inside the binary: its addon and libraries written out whole to a private folder', async () => {
    const data = tempDir('notesvc-bin-sherpa-')
    try {
      const models = join(data.path, 'models')
      mkdirSync(join(models, 'diarization'), { recursive: true })
      writeTinyDiarizationModels(diarizationModelPaths(models))
      const tmp = join(data.path, 'tmp')
      mkdirSync(tmp)
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const env = { PORT: String(port), NOTESVC_DATA_DIR: join(data.path, 'data'), NOTESVC_MODELS_DIR: models, NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'sherpa-onnx', TMPDIR: tmp }
      const server = await startServer([binary, 'serve'], `${base}/v1/health`, { cwd: work.path, env })
      try {
        expect(((await (await fetch(`${base}/v1/health`)).json()) as any).engines.diarization).toBe('sherpa-onnx')
        const key = (await run([binary, 'keys', 'create', '--email', 's@example.com'], { cwd: work.path, env })).stdout.trim()
        const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
        const wav = readFileSync('/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav')
        const up = (await (await fetch(`${base}/v1/uploads`, { method: 'POST', headers, body: JSON.stringify({ fileName: 'reading.wav', contentType: 'audio/wav', styleId: 'transcript', speakers: 2 }) })).json()) as any
        expect((await fetch(up.uploadUrl, { method: 'PUT', headers: up.headers, body: wav })).status).toBe(200)
        expect((await fetch(`${base}/v1/uploads/${up.noteId}/complete`, { method: 'POST', headers })).status).toBe(202)
        const status = await statusOnceProcessed(async () => await (await fetch(`${base}/v1/notes/${up.noteId}/status`, { headers })).json(), 100, 600)
        expect(status).toMatchObject({ status: 'Done', errorCode: null })
        // speakers on the transcript: sherpa-onnx ran (a diarization that fails leaves none; the
        // generated model's random weights decide how many of the two asked for own a segment)
        const speakers = ((await (await fetch(`${base}/v1/notes/${up.noteId}/speakers`, { headers })).json()) as any).data
        expect(speakers.length).toBeGreaterThan(0)
        expect(speakers[0].id).toBe('A')
      } finally {
        await server.stop()
      }
      const folder = join(tmp, `notesvc-sherpa-onnx-1.13.8-${process.getuid!()}`)
      expect(readdirSync(folder).sort()).toEqual(['libonnxruntime.so', 'libsherpa-onnx-c-api.so', 'sherpa-onnx.node'])
      for (const name of readdirSync(folder)) expect(readFileSync(join(folder, name)).equals(readFileSync(join(ROOT, 'node_modules/sherpa-onnx-linux-x64', name)))).toBe(true)
      expect(statSync(folder).mode & 0o777).toBe(0o700)
    } finally {
      data.remove()
    }
  }, 120_000)

  test('the docs script goes gzipped to a client that takes gzip and as it is to one that does not; both are the reference\'s script', async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const server = await startServer([binary, 'serve'], `${base}/v1/health`, { cwd: work.path, env: { PORT: String(port), NOTESVC_DATA_DIR: join(work.path, 'docs-data') } })
    try {
      const original = readFileSync(join(ROOT, 'node_modules/@scalar/api-reference/dist/browser/standalone.js'))
      const gzipped = await fetch(`${base}/docs/scalar.js`, { headers: { 'accept-encoding': 'gzip, deflate, br' }, decompress: false } as RequestInit)
      expect(gzipped.headers.get('content-encoding')).toBe('gzip')
      const bytes = new Uint8Array(await gzipped.arrayBuffer())
      expect(bytes.length).toBeLessThan(original.length / 2)
      expect(Buffer.from(Bun.gunzipSync(bytes)).equals(original)).toBe(true)
      const plain = await fetch(`${base}/docs/scalar.js`, { headers: { 'accept-encoding': 'identity' } })
      expect(plain.headers.get('content-encoding')).toBeNull()
      expect(Buffer.from(await plain.arrayBuffer()).equals(original)).toBe(true)
    } finally {
      await server.stop()
    }
  })
})
