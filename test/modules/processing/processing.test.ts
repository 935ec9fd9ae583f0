import { afterAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import type { Store } from '../../../src/db/store'
import { recordingEngine } from '../../helpers/engines'
import { makeWav } from '../../fixtures/wav'
import { tempDir } from '../../helpers/process'
import { startFakeOllama } from '../../helpers/fake-ollama'
import { FAKE_WAV_SECONDS, installFakeYtdlp } from '../../fixtures/fake-ytdlp'
import { MEETING_SPOKEN, transcriptOf } from '../../fixtures/spoken-meeting'
import { NO_ANSWER } from '../../../src/engines/llm/builtin'

const servers: { stop(force?: boolean): void }[] = []
afterAll(() => servers.forEach(s => s.stop(true)))

/** A loopback file host that counts the requests it gets. */
function fileHost(files: Record<string, { body: Uint8Array | string; type?: string; status?: number; redirect?: string }>) {
  const hits: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      hits.push(path)
      const f = files[path]
      if (!f) return new Response('missing', { status: 404 })
      if (f.redirect) return new Response(null, { status: 302, headers: { location: f.redirect } })
      return new Response(f.body as BodyInit, { status: f.status ?? 200, headers: { 'content-type': f.type ?? 'audio/wav' } })
    },
  })
  servers.push(server)
  return { base: `http://127.0.0.1:${server.port}`, hits }
}

async function appOn(store: Store, env: Record<string, string> = {}) {
  const rec = recordingEngine()
  const t = createTestApp({ env: { NOTESVC_LLM: 'builtin', NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', ...env }, engines: { asr: () => rec.engine }, store })
  return { ...t, rec, token: await t.key() }
}

const MEETING = 'Maria opened the weekly planning meeting. We decided to ship the beta on March third. ' +
  'Tom will write the migration guide by Friday. The budget for the launch is forty thousand euros. ' +
  'Action item: Maria will send the release notes next week. We agreed to keep the upload limit at five gigabytes.'

for (const b of backEnds) describe.skipIf(b.skip)(`processing on ${b.name}`, () => {
  const open = closingAfterEach(b)
  const app = async (env: Record<string, string> = {}) => appOn(await open(), env)

  describe('createSummary', () => {
    test.each(['note', 'bulletpoints', 'meeting-notes', 'transcript'] as const)('%s: 200, two credits, structured content keyed by the style', async styleId => {
      const t = await app()
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING, styleId } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ styleId, creditsCharged: 2 })
      expect(r.body.notice).toBeUndefined()
      expect(r.headers.get('x-credits-remaining')).toBe('58')
      expect(Object.keys(r.body.structuredContent)).toEqual([styleId])
      expect(r.body.title.length).toBeGreaterThan(0)
      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      expect(usage.recent.map((u: any) => [u.operation, u.credits, u.source])).toEqual([['createSummary', 2, 'api_key']])
    })

    test('meeting notes find decisions and action items with owners', async () => {
      const t = await app()
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING, styleId: 'meeting-notes' } })
      const m = r.body.structuredContent['meeting-notes']
      expect(m.decisions.join(' ')).toContain('ship the beta on March third')
      expect(m.actionItems.map((a: any) => a.owner)).toEqual(expect.arrayContaining(['Tom']))
    })

    test('text the content policy refuses is a 422 and costs nothing', async () => {
      const d = tempDir()
      const policy = join(d.path, 'policy.txt')
      await Bun.write(policy, '# refused\nforbidden phrase\n/secret\\s+plans?/\n')
      const t = await app({ NOTESVC_CONTENT_POLICY: policy })
      for (const text of ['This has a Forbidden Phrase in it.', 'Our SECRET   plan is here.']) {
        const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text } })
        expect(r.status).toBe(422)
        expect(r.body.error.code).toBe('content_policy')
      }
      expect((await t.call('POST', '/v1/summaries', { token: t.token, body: { text: 'A forbidden-ish phrasebook is fine.' } })).status).toBe(200)
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toHaveLength(1)
      d.remove()
    })

    test('402 when fewer than two credits remain; nothing changes', async () => {
      const t = await app()
      const account = await t.services.accounts.requireAccount('user@example.com')
      await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 59, source: 'api_key' })
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING } })
      expect(r.status).toBe(402)
      expect(r.body.error.code).toBe('insufficient_credits')
      expect((await t.services.credits.balance(account.id)).totalRemaining).toBe(1)
    })

    test('502 with a useful message when Ollama is down, and nothing is charged', async () => {
      const t = await app({ NOTESVC_LLM: 'ollama', OLLAMA_HOST: 'http://127.0.0.1:9' })
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING } })
      expect(r.status).toBe(502)
      expect(r.body.error.code).toBe('upstream_failure')
      expect(r.body.error.message).toContain('127.0.0.1:9')
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })
  })

  describe('askNoteQuestion', () => {
    test('answers from the note\'s transcript for one credit', async () => {
      const t = await app()
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Planning', content: MEETING } })).body
      const r = await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'What is the budget for the launch?' } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ noteId: note.id, question: 'What is the budget for the launch?', creditsCharged: 1 })
      expect(r.body.answer).toContain('forty thousand euros')
      expect(r.headers.get('x-credits-remaining')).toBe('59')
    })

    test('a PocketSphinx note (no punctuation, word times): at most three timed sentences; a question it does not answer is told so, for one credit too', async () => {
      const t = await app()
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Spoken', content: transcriptOf(MEETING_SPOKEN) } })).body
      await t.services.notes.finish(note.id, { summary: 's', transcript: transcriptOf(MEETING_SPOKEN), structuredContent: null, language: 'en', segments: MEETING_SPOKEN })
      const r = await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'What did we decide?' } })
      expect(r.status).toBe(200)
      expect(r.body.answer).toStartWith('[0:12–0:17] We decided to build on it to a Friday because the tests are not alone.')
      expect(r.body.answer.match(/\[\d+:\d{2}–\d+:\d{2}\]/g).length).toBeLessThanOrEqual(3)
      const none = await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'What is the weather in Paris?' } })
      expect(none.body).toMatchObject({ answer: NO_ANSWER, creditsCharged: 1 })
      expect(none.headers.get('x-credits-remaining')).toBe('58')
    })

    test('404 for an unknown note, 409 while the note is processing; neither charges', async () => {
      const t = await app()
      expect((await t.call('POST', '/v1/notes/note_nope/questions', { token: t.token, body: { question: 'Why?' } })).status).toBe(404)
      const up = (await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'a.wav', contentType: 'audio/wav' } })).body
      const r = await t.call('POST', `/v1/notes/${up.noteId}/questions`, { token: t.token, body: { question: 'Why?' } })
      expect(r.status).toBe(409)
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })

    test('50 parallel questions against 10 credits: exactly 10 answered, 40 refused with 402', async () => {
      const t = await app()
      const account = await t.services.accounts.requireAccount('user@example.com')
      await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 50, source: 'api_key' })
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'P', content: MEETING } })).body
      const results = await Promise.all(Array.from({ length: 50 }, () => t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'Who writes the migration guide?' } })))
      const statuses = results.map(r => r.status)
      expect(statuses.filter(s => s === 200)).toHaveLength(10)
      expect(statuses.filter(s => s === 402)).toHaveLength(40)
      const usage = (await t.call('GET', '/v1/usage?limit=100', { token: t.token })).body
      expect(usage.balance.totalRemaining).toBe(0)
      expect(usage.recent.reduce((n: number, u: any) => n + u.credits, 0)).toBe(60)
    })
  })

  describe('createTranscription', () => {
    test('fetches the audio, charges per started minute, and returns the transcript inline', async () => {
      const host = fileHost({ '/talk.wav': { body: makeWav({ seconds: 75, sampleRate: 8000 }) } })
      const t = await app({ NOTESVC_ALLOW_PRIVATE_URLS: '1' })
      const r = await t.call('POST', '/v1/transcriptions', { token: t.token, body: { audioUrl: `${host.base}/talk.wav`, timeoutSeconds: 60 } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ durationSeconds: 75, creditsCharged: 2, language: 'en' })
      expect(r.body.transcript).toContain('Heard')
      expect(r.headers.get('x-credits-remaining')).toBe('58')
      expect(t.rec.calls.reduce((n, c) => n + c.samples, 0)).toBe(75 * 16_000)
    })

    test('private and loopback addresses are refused before any request is made', async () => {
      const host = fileHost({ '/talk.wav': { body: makeWav({ seconds: 1 }) } })
      const t = await app()
      for (const audioUrl of [`${host.base}/talk.wav`, `https://127.0.0.1:${new URL(host.base).port}/talk.wav`, 'https://localhost/talk.wav', 'https://169.254.169.254/latest/meta-data/']) {
        const r = await t.call('POST', '/v1/transcriptions', { token: t.token, body: { audioUrl } })
        expect(`${audioUrl} → ${r.status}`).toBe(`${audioUrl} → 400`)
        expect(r.body.error.details[0].field).toBe('audioUrl')
      }
      expect(host.hits).toEqual([])
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })

    test('a source that answers 500 is a 502, and nothing is charged', async () => {
      const host = fileHost({ '/broken.wav': { body: 'boom', status: 500 } })
      const t = await app({ NOTESVC_ALLOW_PRIVATE_URLS: '1' })
      const r = await t.call('POST', '/v1/transcriptions', { token: t.token, body: { audioUrl: `${host.base}/broken.wav` } })
      expect(r.status).toBe(502)
      expect(r.body.error.code).toBe('upstream_failure')
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })
  })

  describe('no speech engine installed (NOTESVC_ASR=auto finds neither)', () => {
    const bin = tempDir('notesvc-ytdlp-bin-')
    afterAll(() => bin.remove())

    test('createTranscription and createYoutubeSummary answer 502 naming both fixes, before fetching or charging anything', async () => {
      const host = fileHost({ '/talk.wav': { body: makeWav({ seconds: 5 }) } })
      const ytdlpLog = join(bin.path, 'calls.jsonl')
      const ytdlp = installFakeYtdlp(bin.path, { log: ytdlpLog })
      // no Whisper model in the app's models folder, PocketSphinx looked for where it is not
      const t = createTestApp({
        env: { NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_YTDLP: ytdlp, NOTESVC_RATE_LIMITS: 'processing=1000' },
        config: { pocketsphinx: { program: '/nonexistent/bin/pocketsphinx_continuous' } },
        store: await open(),
      })
      const token = await t.key()
      const calls = [
        await t.call('POST', '/v1/transcriptions', { token, body: { audioUrl: `${host.base}/talk.wav` } }),
        await t.call('POST', '/v1/youtube-summaries', { token, body: { youtubeUrl: 'https://youtu.be/dQw4w9WgXcQ' } }),
      ]
      for (const r of calls) {
        expect(r.status).toBe(502)
        expect(r.body.error.code).toBe('upstream_failure')
        expect(r.body.error.message).toContain('`bun run cli models pull base.en`')
        expect(r.body.error.message).toContain('`apt-get install pocketsphinx pocketsphinx-en-us`')
        expect(r.body.error.message).toEndWith('Nothing was charged.')
      }
      expect(host.hits).toEqual([])
      expect(await Bun.file(ytdlpLog).exists()).toBe(false)
      const usage = (await t.call('GET', '/v1/usage', { token })).body
      expect(usage.recent).toEqual([])
      expect(usage.balance.totalRemaining).toBe(60)
      // a sandbox key needs no engine
      const sandbox = await t.call('POST', '/v1/transcriptions', { token: await t.key({ sandbox: true }), body: { audioUrl: `${host.base}/talk.wav` } })
      expect(sandbox.status).toBe(200)
      expect(sandbox.body.creditsCharged).toBe(0)
    })
  })

  describe('with Ollama (a stand-in that speaks its protocol)', () => {
    test('auto uses Ollama when it answers with the model; refusals are 422; a long text is summarized in parts', async () => {
      const fake = startFakeOllama({ contextLength: 2048 })
      servers.push({ stop: () => fake.stop() })
      const t = await app({ NOTESVC_LLM: 'auto', OLLAMA_HOST: fake.host })
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING, styleId: 'meeting-notes' } })
      expect(r.status).toBe(200)
      expect(fake.requestsTo('/api/chat')).toHaveLength(1)
      expect(fake.requestsTo('/api/chat')[0]!.body.format.properties).toBeDefined()
      expect(t.services.llmSelector.lastKnown()).toBe('ollama')
      expect((await t.call('GET', '/v1/health')).body.engines.llm).toBe('ollama')

      // 2048 tokens of context: 60,000 characters cannot go in one call
      const long = Array.from({ length: 400 }, (_, i) => `Item ${i}: the team reviewed topic number ${i} and agreed on next steps.`).join(' ')
      const before = fake.requestsTo('/api/chat').length
      const big = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: long, styleId: 'note' } })
      expect(big.status).toBe(200)
      expect(fake.requestsTo('/api/chat').length - before).toBeGreaterThan(2)
      for (const req of fake.requestsTo('/api/chat').slice(before)) {
        expect(JSON.stringify(req.body.messages).length).toBeLessThan(12_000)
      }

      fake.behaviour = { refusal: 'json' }
      const refused = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING } })
      expect(refused.status).toBe(422)
      expect(refused.body.error.code).toBe('content_policy')
      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      expect(usage.recent.map((u: any) => u.credits)).toEqual([2, 2])
    })

    test('a question sends only the relevant passages of a long transcript to the model', async () => {
      const fake = startFakeOllama()
      servers.push({ stop: () => fake.stop() })
      const t = await app({ NOTESVC_LLM: 'ollama', OLLAMA_HOST: fake.host })
      const filler = Array.from({ length: 2000 }, (_, i) => `Segment ${i} covers routine matters of no consequence.`).join(' ')
      const content = `${filler} The warehouse lease ends on the ninth of October. ${filler}`
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Long', content } })).body
      const r = await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'When does the warehouse lease end?' } })
      expect(r.status).toBe(200)
      expect(r.body.answer).toContain('ninth of October')
      const sent = JSON.stringify(fake.requestsTo('/api/chat').at(-1)!.body)
      expect(sent).toContain('warehouse lease ends')
      expect(sent.length).toBeLessThan(content.length / 10)
    })

    test('a model that is not pulled is a 502 that names the pull command', async () => {
      const fake = startFakeOllama({ models: ['mistral:latest'] })
      servers.push({ stop: () => fake.stop() })
      const t = await app({ NOTESVC_LLM: 'ollama', OLLAMA_HOST: fake.host })
      const r = await t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING } })
      expect(r.status).toBe(502)
      expect(r.body.error.message).toContain('ollama pull llama3.2')
    })
  })

  describe('createYoutubeSummary (a stand-in yt-dlp on the path)', () => {
    const bin = tempDir('notesvc-ytdlp-bin-')
    const fake = installFakeYtdlp(bin.path)
    afterAll(() => bin.remove())

    test('checks the length and the balance, downloads, transcribes, summarizes, charges per started minute', async () => {
      const t = await app({ NOTESVC_YTDLP: fake })
      const r = await t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl: 'https://youtu.be/dQw4w9WgXcQ', styleId: 'bulletpoints' } })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ youtubeUrl: 'https://youtu.be/dQw4w9WgXcQ', durationSeconds: 212, creditsCharged: 4, styleId: 'bulletpoints' })
      expect(r.body.structuredContent.bulletpoints.bullets.length).toBeGreaterThan(0)
      expect(r.headers.get('x-credits-remaining')).toBe('56')
      expect(t.rec.calls.reduce((n, c) => n + c.samples, 0)).toBe(FAKE_WAV_SECONDS * 16_000)
    })

    test('402 before anything is downloaded when the video costs more than the balance', async () => {
      const log = join(bin.path, 'calls.jsonl')
      const logged = installFakeYtdlp(bin.path, { name: 'yt-dlp-logged', log })
      const t = await app({ NOTESVC_YTDLP: logged })
      const account = await t.services.accounts.requireAccount('user@example.com')
      await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 57, source: 'api_key' })
      const r = await t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' } })
      expect(r.status).toBe(402)
      const calls = (await Bun.file(log).text()).trim().split('\n').map(l => JSON.parse(l) as string[])
      expect(calls).toHaveLength(1)
      expect(calls[0]).toContain('--dump-single-json')
    })

    test('only YouTube video links are accepted; an unavailable video is a 502; a live stream a 400', async () => {
      const t = await app({ NOTESVC_YTDLP: fake })
      for (const youtubeUrl of ['https://vimeo.com/123', 'https://www.youtube.com/channel/UCuAXFkgsw1L7xaCfnd5JJOw', 'https://evil.example/watch?v=dQw4w9WgXcQ']) {
        expect((await t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl } })).status).toBe(400)
      }
      const gone = await t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl: 'https://www.youtube.com/watch?v=unavailabl0' } })
      expect(gone.status).toBe(502)
      expect(gone.body.error.message).toContain('Video unavailable')
      expect((await t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl: 'https://www.youtube.com/watch?v=livestream0' } })).status).toBe(400)
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })
  })

  describe('the remaining error statuses', () => {
    test('askNoteQuestion: 502 when the engine is down, nothing charged', async () => {
      const t = await app({ NOTESVC_LLM: 'ollama', OLLAMA_HOST: 'http://127.0.0.1:9' })
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'P', content: MEETING } })).body
      const r = await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'Who writes the guide?' } })
      expect(r.status).toBe(502)
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })

    test('askNoteQuestion: 402 with no credits left', async () => {
      const t = await app()
      const account = await t.services.accounts.requireAccount('user@example.com')
      await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 60, source: 'api_key' })
      const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'P', content: MEETING } })).body
      expect((await t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'Who?' } })).status).toBe(402)
    })

    test('createTranscription: 402 when the recording costs more than the balance, before transcribing', async () => {
      const host = fileHost({ '/long.wav': { body: makeWav({ seconds: 130, sampleRate: 4000 }) } })
      const t = await app({ NOTESVC_ALLOW_PRIVATE_URLS: '1' })
      const account = await t.services.accounts.requireAccount('user@example.com')
      await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 58, source: 'api_key' })
      const r = await t.call('POST', '/v1/transcriptions', { token: t.token, body: { audioUrl: `${host.base}/long.wav` } })
      expect(r.status).toBe(402)
      expect(r.body.error.message).toContain('needs 3 credits but 2 remain')
      expect(t.rec.calls).toEqual([])
    })
  })

  describe('sandbox forms', () => {
    test('every processing route answers with fixed output, a notice and nothing charged, with no engine reachable', async () => {
      const t = await app({ NOTESVC_LLM: 'ollama', OLLAMA_HOST: 'http://127.0.0.1:9', NOTESVC_YTDLP: '/nonexistent/yt-dlp' })
      const sandbox = await t.key({ sandbox: true })
      const note = (await t.call('POST', '/v1/notes', { token: sandbox, body: { title: 'S', content: MEETING } })).body
      const calls = [
        await t.call('POST', '/v1/summaries', { token: sandbox, body: { text: MEETING, styleId: 'meeting-notes' } }),
        await t.call('POST', '/v1/transcriptions', { token: sandbox, body: { audioUrl: 'https://example.com/a.mp3' } }),
        await t.call('POST', '/v1/youtube-summaries', { token: sandbox, body: { youtubeUrl: 'https://youtu.be/dQw4w9WgXcQ' } }),
        await t.call('POST', `/v1/notes/${note.id}/questions`, { token: sandbox, body: { question: 'When is the launch?' } }),
      ]
      for (const r of calls) {
        expect(r.status).toBe(200)
        expect(r.body.creditsCharged).toBe(0)
        expect(r.headers.get('x-credits-remaining')).toBe('60')
      }
      for (const r of calls.slice(0, 3)) expect(r.body.notice).toContain('fixed sample data')
      // the same input gives the same output
      const again = await t.call('POST', '/v1/summaries', { token: sandbox, body: { text: MEETING, styleId: 'meeting-notes' } })
      expect(again.body).toEqual(calls[0]!.body)
      expect(t.rec.calls).toEqual([])
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.recent).toEqual([])
    })
  })

  /**
   * SPEC.md "Limits / Credits" and DECISIONS.md "Credits": a charge that would go below zero is refused
   * with 402; one that leaves exactly zero is not. For every charging route: a balance equal to the cost
   * is served and ends at 0; one credit less is 402 insufficient_credits and nothing changes. The costs
   * are the interface's: 1 per started minute of media, 2 for a text summary, 1 for a question.
   */
  describe('a balance exactly equal to the cost is enough; one credit less is 402, on every charging route', () => {
    const bin = tempDir('notesvc-ytdlp-edge-')
    const ytdlp = installFakeYtdlp(bin.path)
    afterAll(() => bin.remove())
    const host = fileHost({ '/75s.wav': { body: makeWav({ seconds: 75, sampleRate: 8000 }) } })

    type Edge = Awaited<ReturnType<typeof app>>
    interface ChargingRoute {
      op: string
      /** what this request costs by the interface */
      cost: number
      /** the status of a request that is served */
      served: number
      /** sets up what the request needs (a note, an uploaded file), then returns the request */
      prepare(t: Edge): Promise<() => ReturnType<Edge['call']>>
    }

    const routes: ChargingRoute[] = [
      {
        op: 'completeUpload', cost: 2, served: 202, // a 61-second recording: two started minutes
        async prepare(t) {
          const up = (await t.call('POST', '/v1/uploads', { token: t.token, body: { fileName: 'a.wav', contentType: 'audio/wav' } })).body
          const res = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: makeWav({ seconds: 61, sampleRate: 8000 }) as BodyInit }))
          expect(res.status).toBe(200)
          return () => t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: t.token })
        },
      },
      {
        op: 'createTranscription', cost: 2, served: 200, // 75 seconds: two started minutes
        async prepare(t) {
          return () => t.call('POST', '/v1/transcriptions', { token: t.token, body: { audioUrl: `${host.base}/75s.wav` } })
        },
      },
      {
        op: 'createSummary', cost: 2, served: 200,
        async prepare(t) {
          return () => t.call('POST', '/v1/summaries', { token: t.token, body: { text: MEETING } })
        },
      },
      {
        op: 'createYoutubeSummary', cost: 4, served: 200, // the stand-in video is 212 seconds: four started minutes
        async prepare(t) {
          return () => t.call('POST', '/v1/youtube-summaries', { token: t.token, body: { youtubeUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' } })
        },
      },
      {
        op: 'askNoteQuestion', cost: 1, served: 200,
        async prepare(t) {
          const note = (await t.call('POST', '/v1/notes', { token: t.token, body: { title: 'Planning', content: MEETING } })).body
          return () => t.call('POST', `/v1/notes/${note.id}/questions`, { token: t.token, body: { question: 'Who writes the migration guide?' } })
        },
      },
    ]

    /** A free account (60 credits a month) spent down to `balance`. */
    async function withBalance(balance: number) {
      const t = await app({ NOTESVC_ALLOW_PRIVATE_URLS: '1', NOTESVC_YTDLP: ytdlp })
      const account = await t.services.accounts.requireAccount('user@example.com')
      if (balance < 60) await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 60 - balance, source: 'api_key' })
      expect((await t.call('GET', '/v1/usage', { token: t.token })).body.balance.totalRemaining).toBe(balance)
      return t
    }

    test.each(routes.map(r => [r.op, r.cost, r] as const))('%s: a balance of exactly its cost (%i) is served and leaves 0', async (_op, cost, route) => {
      const t = await withBalance(cost)
      const send = await route.prepare(t)
      const r = await send()
      expect({ status: r.status, creditsCharged: r.body.creditsCharged, remaining: r.headers.get('x-credits-remaining') }).toEqual({ status: route.served, creditsCharged: cost, remaining: '0' })
      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      expect(usage.balance.totalRemaining).toBe(0)
      expect(usage.recent[0]).toMatchObject({ operation: route.op, credits: cost })
    })

    test.each(routes.map(r => [r.op, r.cost - 1, r] as const))('%s: one credit less (%i) is 402 insufficient_credits and nothing changes', async (_op, balance, route) => {
      const t = await withBalance(balance)
      const send = await route.prepare(t)
      const r = await send()
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 402, code: 'insufficient_credits' })
      const usage = (await t.call('GET', '/v1/usage', { token: t.token })).body
      expect(usage.balance.totalRemaining).toBe(balance)
      expect(usage.recent.map((u: any) => u.operation)).not.toContain(route.op)
      // refused before the work: no audio was transcribed
      expect(t.rec.calls).toEqual([])
    })
  })
})
