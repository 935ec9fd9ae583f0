import { describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp } from '../../helpers/app'
import { SPEC_COSTS, SPEC_ERROR_STATUS, SPEC_OPERATIONS, SPEC_SCOPES } from '../../helpers/interface'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'

describe('GET /v1', () => {
  test('fills every ApiIndex field with real content', async () => {
    const t = createTestApp({ env: { NOTESVC_PUBLIC_URL: 'https://notes.example.org', NOTESVC_RATE_LIMITS: 'read=200' } })
    const r = await t.call('GET', '/v1')
    expect(r.status).toBe(200)
    const b = r.body
    expect(Object.keys(b).sort()).toEqual(['authentication', 'credits', 'documentation', 'mcp', 'name', 'openapi', 'rateLimits', 'resources', 'sandbox', 'scopes', 'version'].sort())
    expect(b).toMatchObject({ name: 'notesvc', version: '1.1.0', documentation: 'https://notes.example.org/docs', openapi: 'https://notes.example.org/v1/openapi.json', mcp: 'https://notes.example.org/mcp' })
    expect(b.scopes).toEqual(SPEC_SCOPES)
    expect(b.credits.costs).toEqual(SPEC_COSTS)
    expect(b.credits.plans).toEqual({ free: { monthlyGrant: 60 }, pro: { monthlyGrant: 2000 } })
    expect(b.rateLimits.classes.read.limit).toBe(200)
    expect(b.rateLimits.classes.processing.operations).toEqual(['askNoteQuestion', 'askLibrary', 'completeUpload', 'createTranscription', 'createSummary', 'createYoutubeSummary', 'createNoteSummary', 'createAudioTranscription', 'createAudioTranslation'])
    expect(b.sandbox.keyPrefix).toBe('svc_test_')
    expect(b.authentication.oauth.tokenUrl).toBe('https://notes.example.org/oauth/token')
    expect(b.resources.notes).toBe('https://notes.example.org/v1/notes')
  })

  test('health needs no credential and reports the version', async () => {
    // no Whisper model in the app's models folder; the test machine has PocketSphinx's Debian packages
    const t = createTestApp()
    expect((await t.call('GET', '/v1/health')).body).toEqual({ status: 'ok', version: '1.1.0', engines: { asr: 'pocketsphinx', llm: 'builtin', diarization: 'builtin' } })
  })

  test('health reports the speech engine NOTESVC_ASR=auto found: whisper with a model, none with neither (status stays ok)', async () => {
    const withModel = createTestApp({ config: { pocketsphinx: { program: '/nonexistent/pocketsphinx_continuous' } } })
    mkdirSync(withModel.config.modelsDir, { recursive: true })
    writeTinyWhisperModel(join(withModel.config.modelsDir, 'ggml-base.en.bin'), { multilingual: false })
    expect((await withModel.call('GET', '/v1/health')).body).toEqual({ status: 'ok', version: '1.1.0', engines: { asr: 'whisper', llm: 'builtin', diarization: 'builtin' } })
    const neither = createTestApp({ config: { pocketsphinx: { program: '/nonexistent/pocketsphinx_continuous' } } })
    const r = await neither.call('GET', '/v1/health')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ status: 'ok', version: '1.1.0', engines: { asr: 'none', llm: 'builtin', diarization: 'builtin' } })
  })
})

describe('OpenAPI document', () => {
  test('every operation of the SPEC is there with its operationId, scopes, x-service-credits and error statuses', async () => {
    const t = createTestApp()
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('1.1.0')
    const found = new Map<string, any>()
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) found.set(op.operationId, { ...op, path, method })
    }
    for (const op of SPEC_OPERATIONS) {
      const d = found.get(op.id)
      expect(d, op.id).toBeDefined()
      expect(`${d.method.toUpperCase()} ${d.path}`).toBe(`${op.method} ${op.path}`)
      expect(d['x-service-credits'], op.id).toBe(op.cost)
      const isPublic = op.scopes.length === 0
      expect(d.security, op.id).toEqual(isPublic ? [] : [{ apiKey: op.scopes }, { oauth2: op.scopes }])
      // SPEC: the common errors of credentialed operations plus each one's extra errors; the two public ones only 429 and 500
      const errorStatuses = Object.keys(d.responses).filter(s => Number(s) >= 400).sort()
      const common = isPublic ? ['429', '500'] : ['400', '401', '403', '429', '500']
      expect(errorStatuses, op.id).toEqual([...new Set([...common, ...op.errors.map(String)])].sort())
    }
    expect(found.get('askNoteQuestion')['x-service-credits']).toBe(1)
    expect(found.get('completeUpload')['x-service-credits']).toBe('1 per started minute')
    expect(Object.keys(found.get('createUpload').responses)).toEqual(expect.arrayContaining(['201', '413', '415']))
    expect(Object.keys(found.get('createSummary').responses)).toEqual(expect.arrayContaining(['200', '402', '422', '502']))
    expect(found.get('createNote').requestBody.content).toEqual({ 'application/json': expect.anything() })
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes['usage:read']).toBe('read credit balance and usage history')
  })
})

describe('documentation pages', () => {
  test('the docs page loads its script from this server, never a CDN', async () => {
    const t = createTestApp()
    const html = (await t.call('GET', '/docs')).text
    const sources = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map(m => m[1])
    // the reference's bundle, after the line that tells its zod not to try eval (the page's CSP)
    expect(sources).toEqual(['/docs/setup.js', '/docs/scalar.js'])
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)/)
    const script = await t.app.handle(new Request('http://localhost/docs/scalar.js'))
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
  })

  test('the docs page switches off the reference\'s hosted-service buttons (Ask AI, Generate MCP, Share, Deploy)', async () => {
    const t = createTestApp()
    const html = (await t.call('GET', '/docs')).text
    const attribute = /<script id="api-reference" data-configuration="([^"]*)"/.exec(html)?.[1]
    expect(attribute).toBeDefined()
    const unescaped = attribute!.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
    // Scalar's options: `agent` (Ask AI), `mcp` (Generate MCP), `showDeveloperTools` (the toolbar with Share and Deploy)
    expect(JSON.parse(unescaped)).toMatchObject({ url: '/v1/openapi.json', agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: 'never' })
    // the embedded script still reads those options under these names
    const script = await (await t.app.handle(new Request('http://localhost/docs/scalar.js'))).text()
    for (const check of ['agent?.disabled', 'mcp?.disabled', 'showDeveloperTools===`never`']) expect(script).toContain(check)
  })

  test('every error code has an anchor on the errors page that doc_url points to', async () => {
    const t = createTestApp()
    const html = (await t.call('GET', '/docs/errors')).text
    // each code's row gives the status SPEC.md "Errors" pairs it with
    for (const [code, status] of Object.entries(SPEC_ERROR_STATUS)) expect(html).toMatch(new RegExp(`<tr id="${code}">.*?</td><td>${status}</td>`))
    const err = (await t.call('GET', '/v1/notes')).body.error
    expect(err.doc_url).toBe('http://localhost/docs/errors#invalid_token')
  })
})

describe('GET /v1/health while the database does not answer', () => {
  test('says degraded with the reason, still 200 and never refused; ok again, as before, once it answers', async () => {
    let answers = false
    const t = createTestApp({ alter: s => { s.backend.reachable = async () => answers } })
    const ok = { status: 'ok', version: '1.1.0', engines: { asr: 'pocketsphinx', llm: 'builtin', diarization: 'builtin' } }
    const down = await t.call('GET', '/v1/health')
    expect(down.status).toBe(200)
    expect(down.body).toEqual({ ...ok, status: 'degraded', reason: 'the database cannot be reached: requests that need it answer 503 service_unavailable with Retry-After until it is back' })
    // with detail: the back end, but no worker count (it is read from the database)
    expect((await t.call('GET', '/v1/health?detail')).body).toEqual({ ...down.body, database: 'sqlite' })
    answers = true
    expect((await t.call('GET', '/v1/health')).body).toEqual(ok)
    expect((await t.call('GET', '/v1/health?detail')).body).toEqual({ ...ok, database: 'sqlite', workers: 0 })
  })

  test('the errors page lists service_unavailable, the one code beyond the interface, with 503', async () => {
    const html = (await createTestApp().call('GET', '/docs/errors')).text
    expect(html).toMatch(/<tr id="service_unavailable">.*?<\/td><td>503<\/td>/)
  })
})

describe('GET /v1/health?detail', () => {
  test('adds the database back end and the live job worker processes; without detail (or detail=0) the body is as before; no value is refused', async () => {
    const t = createTestApp()
    const plain = { status: 'ok', version: '1.1.0', engines: { asr: 'pocketsphinx', llm: 'builtin', diarization: 'builtin' } }
    expect((await t.call('GET', '/v1/health?detail')).body).toEqual({ ...plain, database: 'sqlite', workers: 0 })
    await t.services.workers.start()
    try {
      expect((await t.call('GET', '/v1/health?detail=1')).body).toEqual({ ...plain, database: 'sqlite', workers: 1 })
      expect((await t.call('GET', '/v1/health?detail=true')).body).toMatchObject({ database: 'sqlite', workers: 1 })
      for (const off of ['0', 'false', 'no', 'OFF']) expect((await t.call('GET', `/v1/health?detail=${off}`)).body).toEqual(plain)
      for (const odd of ['%00', 'x'.repeat(5000), '1&detail=2', '[]']) {
        const r = await t.call('GET', `/v1/health?detail=${odd}`)
        expect(r.status).toBe(200)
        expect(r.body.status).toBe('ok')
      }
    } finally {
      await t.services.workers.stop()
    }
    expect((await t.call('GET', '/v1/health?detail')).body.workers).toBe(0)
  })
})
