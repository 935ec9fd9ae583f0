import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { diarizationError } from '../../../bench/lib/der'
import { conversation, realVoices } from '../../fixtures/conversation'
import { makeWav, wavFromPcm } from '../../fixtures/wav'
import { loadConfig } from '../../../src/config'
import { runDoctor } from '../../../src/doctor'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { firstStartKey, freePort, startServer, tempDir } from '../../helpers/process'
import { wer } from '../../helpers/wer'

/**
 * NOTESVC_ASR=remote against a SECOND real notesvc on loopback: a `serve` process on PocketSphinx,
 * reached through its OpenAI-compatible POST /v1/audio/transcriptions with one of its API keys. The
 * first notesvc (an app driven through app.handle, with its workers) sends it each chunk of an upload
 * and diarizes locally. Then each way the server can fail (never answering, answering 500, a closed
 * port, a refused key) must end the note in a clear error with the credits given back.
 */
const second = tempDir('notesvc-remote-server-')
let server: Awaited<ReturnType<typeof startServer>>
let base: string
let serverKey: string
const apps: ReturnType<typeof createTestApp>[] = []
const int16 = (f: Float32Array) => Int16Array.from(f, x => Math.max(-32768, Math.min(32767, Math.round(x * 32767))))

beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  server = await startServer([process.execPath, 'run', 'src/cli.ts', 'serve'], `${base}/v1/health`, {
    env: {
      NOTESVC_DATA_DIR: second.path, PORT: String(port), NOTESVC_ASR: 'pocketsphinx', NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off',
      NOTESVC_WORKERS: '0', NOTESVC_RATE_LIMITS: 'read=10000,write=1000,processing=1000',
    },
    timeoutMs: 30_000,
  })
  serverKey = await firstStartKey(server.proc.stdout)
}, 60_000)

afterAll(async () => {
  for (const t of apps) await t.services.workers.stop()
  await server?.stop()
  second.remove()
})

/** The first notesvc: NOTESVC_ASR=remote to `url`, its workers running. */
async function firstNotesvc(env: Record<string, string>) {
  const t = createTestApp({ env: { NOTESVC_ASR: 'remote', NOTESVC_WORKERS: '2', NOTESVC_RATE_LIMITS: 'read=10000,write=1000,processing=1000', ...env } })
  apps.push(t)
  await t.services.workers.start()
  return t
}

/** Uploads `wav` to the first notesvc, completes it, and waits until its note is Done or in Error. */
async function uploadAndWait(t: ReturnType<typeof createTestApp>, token: string, wav: Uint8Array, speakers?: number) {
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'call.wav', contentType: 'audio/wav', fileSize: wav.length, styleId: 'meeting-notes', ...(speakers ? { speakers } : {}) } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  const complete = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
  expect(complete.status).toBe(202)
  let status: any
  // the machine may be busy (the second server runs PocketSphinx): no bound on the time but the test's
  for (;;) {
    status = (await t.call('GET', `/v1/notes/${up.noteId}/status`, { token })).body
    if (status.status === 'Done' || status.status === 'Error') break
    await Bun.sleep(100)
  }
  return { noteId: up.noteId as string, charged: complete.body.creditsCharged as number, status }
}

describe('a recording transcribed through a second notesvc', () => {
  test('segments and words come from the second (PocketSphinx), speakers from the first\'s own diarization; health names the server, never the key', async () => {
    const v = realVoices()
    const c = conversation([v.librivox, v.cards], { seconds: 40, seed: 23, turn: [3, 6] })
    const wav = wavFromPcm(int16(c.samples), 16_000)
    const t = await firstNotesvc({ NOTESVC_ASR_URL: `${base}/v1`, NOTESVC_ASR_KEY: serverKey, NOTESVC_ASR_TIMEOUT_SECONDS: '900' })
    const token = await t.key({ plan: 'pro' })
    const { noteId, status } = await uploadAndWait(t, token, wav, 2)
    expect(status).toMatchObject({ status: 'Done' })

    const verbose = (await t.call('GET', `/v1/notes/${noteId}/transcript?format=verbose_json`, { token })).body
    expect(verbose.segments.length).toBeGreaterThan(3)
    const words = verbose.words
    expect(words.length).toBeGreaterThan(40)
    // word times in order, inside the recording
    for (let i = 1; i < words.length; i++) expect(words[i].start).toBeGreaterThanOrEqual(words[i - 1].start)
    expect(words.at(-1).end).toBeLessThanOrEqual(c.samples.length / 16_000 + 0.01)

    // what the second server hears in the same recording sent to it whole: the same words
    const form = new FormData()
    form.append('file', new Blob([wav as unknown as BlobPart], { type: 'audio/wav' }), 'call.wav')
    form.append('model', 'whisper-1')
    form.append('response_format', 'verbose_json')
    const direct = await (await fetch(`${base}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${serverKey}` }, body: form })).json() as { text: string }
    const heard = wer(direct.text, verbose.transcript)
    console.log(`remote: ${verbose.segments.length} segments, ${words.length} words; WER against the second server's own transcription of the whole file ${heard.wer.toFixed(3)}`)
    expect(heard.wer).toBeLessThan(0.25)

    // the speakers are the first notesvc's: two, and who spoke when as the recording has it
    const speakers = (await t.call('GET', `/v1/notes/${noteId}/speakers`, { token })).body.data
    expect(speakers.map((s: { id: string }) => s.id)).toEqual(['A', 'B'])
    const hyp = verbose.segments.map((s: { start: number; end: number; speakerId: string }) => ({ start: s.start, end: s.end, speaker: s.speakerId.charCodeAt(0) - 65 }))
    expect(diarizationError(c.truth, hyp).der).toBeLessThan(0.3)

    // the second server did the transcribing: its usage has the chunks' transcriptions
    const usage = (await (await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${serverKey}` } })).json()) as { recent: { credits: number; noteId: string | null }[] }
    expect(usage.recent.filter(r => r.credits > 0 && r.noteId === null).length).toBeGreaterThan(0)

    const health = (await t.call('GET', '/v1/health')).body
    expect(health.engines.asr).toBe('remote')
    expect(health.engines.asrServer).toMatchObject({ url: `${base}/v1`, reachable: true })
    expect(JSON.stringify(health)).not.toContain(serverKey)
  }, 900_000)
})

describe('each failure ends the note in a clear error, its credits refunded', () => {
  const fakes: ReturnType<typeof Bun.serve>[] = []
  afterAll(() => fakes.forEach(f => f.stop(true)))

  /** A loopback server answering every request with `answer`, counting them. */
  function fake(answer: () => Response | Promise<Response>) {
    const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => { counted.n++; return answer() } })
    const counted = { n: 0, url: `http://127.0.0.1:${s.port}/v1` }
    fakes.push(s)
    return counted
  }

  const cases: [string, () => Promise<{ url: string; key?: string; n?: () => number }>, { message: string[]; tries?: number }][] = [
    ['a server that never answers (NOTESVC_ASR_TIMEOUT_SECONDS=1)', async () => { const f = fake(() => new Promise<Response>(() => {})); return { url: f.url, n: () => f.n } },
      { message: ['did not answer within 1 s', '3 tries', 'NOTESVC_ASR_TIMEOUT_SECONDS'], tries: 3 }],
    ['a server answering 500', async () => { const f = fake(() => Response.json({ error: { message: 'CUDA out of memory' } }, { status: 500 })); return { url: f.url, n: () => f.n } },
      { message: ['answered 500: CUDA out of memory', '3 tries', "speech server's log"], tries: 3 }],
    ['a closed port (connection refused)', async () => ({ url: `http://127.0.0.1:${await freePort()}/v1` }),
      { message: ['could not be reached', '3 tries', 'NOTESVC_ASR_URL'] }],
    ['a key the second notesvc refuses (401)', async () => ({ url: `${base}/v1`, key: 'nsk_not_a_key' }),
      { message: ['refused the key (401', 'NOTESVC_ASR_KEY'] }],
  ]

  test.each(cases)('%s', async (_name, make, expected) => {
    const target = await make()
    const t = await firstNotesvc({ NOTESVC_ASR_URL: target.url, NOTESVC_ASR_TIMEOUT_SECONDS: '1', ...(target.key ? { NOTESVC_ASR_KEY: target.key } : {}) })
    const token = await t.key()
    const before = (await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining
    // one chunk (a tone: the servers here never listen to it)
    const { status, charged } = await uploadAndWait(t, token, makeWav({ seconds: 5 }))
    expect(charged).toBe(1)
    expect(status).toMatchObject({ status: 'Error', errorCode: 'engine_unavailable' })
    for (const part of expected.message) expect(status.errorMessage).toContain(part)
    expect(status.errorMessage).toContain(target.url)
    if (target.key) expect(status.errorMessage).not.toContain(target.key)
    // the charge given back
    expect((await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining).toBe(before)
    if (expected.tries) expect(target.n!()).toBe(expected.tries)
    const health = (await t.call('GET', '/v1/health')).body
    expect(health.engines.asrServer).toMatchObject({ url: target.url })
    expect(health.engines.asrServer.reachable).not.toBeNull()
    console.log(`remote failure: ${status.errorCode}: ${status.errorMessage}`)
  }, 60_000)

  test('a synchronous transcription through a failing server answers 502 with the reason, nothing charged', async () => {
    const f = fake(() => Response.json({ error: { message: 'CUDA out of memory' } }, { status: 500 }))
    const t = await firstNotesvc({ NOTESVC_ASR_URL: f.url })
    const token = await t.key()
    const form = new FormData()
    form.append('file', new Blob([makeWav({ seconds: 5 }) as unknown as BlobPart], { type: 'audio/wav' }), 'a.wav')
    form.append('model', 'whisper-1')
    const res = await t.app.handle(new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }))
    const r = { status: res.status, headers: res.headers, text: '', body: await res.json() as any }
    expectEnvelope(r, 502, 'upstream_failure')
    expect(r.body.error.message).toContain(`The speech server ${f.url} answered 500: CUDA out of memory`)
    expect(r.body.error.message).toContain('Nothing was charged.')
    expect((await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining).toBe(60)
  }, 60_000)
})

describe('a server that says how sure it is of each word (faster-whisper, speaches)', () => {
  test('its words\' `probability` is their confidence: the OpenAI route\'s verbose_json passes it on', async () => {
    // what faster-whisper's server answers for verbose_json with word granularity
    const answer = {
      task: 'transcribe', language: 'english', duration: 5, text: 'Hello world.',
      segments: [{ id: 0, start: 0, end: 2, text: 'Hello world.' }],
      words: [{ word: ' Hello', start: 0, end: 1, probability: 0.91 }, { word: ' world.', start: 1, end: 2, probability: 0.42 }, { word: ' odd', start: 2, end: 2.5, probability: 7 }],
    }
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json(answer) })
    try {
      const t = await firstNotesvc({ NOTESVC_ASR_URL: `http://127.0.0.1:${server.port}/v1` })
      const token = await t.key()
      const form = new FormData()
      form.append('file', new Blob([makeWav({ seconds: 5 }) as unknown as BlobPart], { type: 'audio/wav' }), 'a.wav')
      form.append('model', 'whisper-1')
      form.append('response_format', 'verbose_json')
      form.append('timestamp_granularities[]', 'word')
      const res = await t.app.handle(new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }))
      expect(res.status).toBe(200)
      // a probability outside 0..1 is not one: the word is kept without it
      expect(((await res.json()) as { words: unknown[] }).words).toEqual([
        { word: 'Hello', start: 0, end: 1, probability: 0.91 }, { word: 'world.', start: 1, end: 2, probability: 0.42 }, { word: 'odd', start: 2, end: 2.5 },
      ])
    } finally {
      server.stop(true)
    }
  }, 60_000)
})

describe('its settings, doctor and the models it offers', () => {
  const env = { NOTESVC_DATA_DIR: '/tmp/notesvc-unused' }

  test('NOTESVC_ASR=remote needs NOTESVC_ASR_URL, an http(s) URL; the URL without remote is refused too', () => {
    expect(() => loadConfig({ ...env, NOTESVC_ASR: 'remote' })).toThrow('NOTESVC_ASR=remote needs NOTESVC_ASR_URL')
    expect(() => loadConfig({ ...env, NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: 'gpu:8080' })).toThrow('NOTESVC_ASR_URL=gpu:8080 is not an http(s) URL')
    expect(() => loadConfig({ ...env, NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: 'http://gpu:8080/v1', NOTESVC_ASR_TIMEOUT_SECONDS: '0' })).toThrow('NOTESVC_ASR_TIMEOUT_SECONDS=0 is not valid; use a whole number from 1 to 3600')
    expect(() => loadConfig({ ...env, NOTESVC_ASR_URL: 'http://gpu:8080/v1' })).toThrow('NOTESVC_ASR_URL is set, but NOTESVC_ASR=auto does not use it: set NOTESVC_ASR=remote')
    expect(loadConfig({ ...env, NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: 'http://gpu:8080/v1' }).asr).toBe('remote')
  })

  test('doctor names the server without its key, and says when it cannot be reached or refuses the key', async () => {
    const lines = async (extra: Record<string, string>) => {
      const out: string[] = []
      await runDoctor(loadConfig({ ...env, NOTESVC_MODELS_URL: 'http://127.0.0.1:9', NOTESVC_LLM: 'builtin', NOTESVC_ASR: 'remote', ...extra }), l => out.push(l))
      return (name: string) => out.find(l => l.includes(` ${name} `)) ?? ''
    }
    const up = await lines({ NOTESVC_ASR_URL: `${base}/v1`, NOTESVC_ASR_KEY: serverKey })
    expect(up('speech server')).toStartWith('ok')
    expect(up('speech server')).toContain(`${base}/v1 answers (GET /models: 200)`)
    expect(up('speech engine')).toContain(`remote, ${base}/v1, model whisper-1 (NOTESVC_ASR=remote)`)
    expect(up('speech server') + up('speech engine')).not.toContain(serverKey)
    const closed = `http://127.0.0.1:${await freePort()}/v1`
    const down = await lines({ NOTESVC_ASR_URL: closed })
    expect(down('speech server')).toStartWith('missing')
    expect(down('speech server')).toContain(`${closed}: it cannot be reached`)
    expect(down('speech server')).toContain('fix: start the speech server, or set NOTESVC_ASR_URL')
    const refused = await lines({ NOTESVC_ASR_URL: `${base}/v1`, NOTESVC_ASR_KEY: 'nsk_not_a_key' })
    expect(refused('speech server')).toStartWith('missing')
    expect(refused('speech server')).toContain('refused the key (401)')
    expect(refused('speech server')).not.toContain('nsk_not_a_key')
  }, 60_000)

  test('GET /v1/models lists the model NOTESVC_ASR_MODEL names beside whisper-1', async () => {
    const t = createTestApp({ env: { NOTESVC_ASR: 'remote', NOTESVC_ASR_URL: `${base}/v1`, NOTESVC_ASR_MODEL: 'Systran/faster-whisper-small', NOTESVC_DIARIZATION: 'off' } })
    const token = await t.key()
    expect((await t.call('GET', '/v1/models', { token })).body.data.map((m: { id: string }) => m.id)).toEqual(['whisper-1', 'Systran/faster-whisper-small'])
  })
})
