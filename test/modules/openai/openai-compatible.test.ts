import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseVtt } from 'node-webvtt'
import OpenAI, { toFile } from 'openai'
import { parseSync as parseSubtitles } from 'subtitle'
import { createTestApp } from '../../helpers/app'
import { recordingEngine } from '../../helpers/engines'
import { run, tempDir } from '../../helpers/process'
import { seededRandom } from '../../fixtures/random'
import { speechWav } from '../../fixtures/speech'
import { wavFromPcm } from '../../fixtures/wav'
import { receiveMultipart } from '../../../src/modules/openai/multipart'

// OpenAI's official npm client pointed at notesvc on loopback (`baseURL: http://127.0.0.1:PORT/v1`),
// transcribing a real LibriVox recording (Debian's pocketsphinx-testdata, 3 s) with PocketSphinx.

setDefaultTimeout(60_000)

const RECORDING = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav'
/** what PocketSphinx hears in it (the book says "he was not an ill-disposed young man") */
const HEARD = 'he was not an illness those young man'
const WORDS = [
  { word: 'he', start: 0.21, end: 0.32 }, { word: 'was', start: 0.33, end: 0.54 }, { word: 'not', start: 0.55, end: 0.97 },
  { word: 'an', start: 1.11, end: 1.29 }, { word: 'illness', start: 1.3, end: 1.68 }, { word: 'those', start: 1.69, end: 2.04 },
  { word: 'young', start: 2.05, end: 2.32 }, { word: 'man', start: 2.33, end: 2.79 },
]
/**
 * Every field of OpenAI's TranscriptionSegment: one chunk from the start (seek 0), 
 * mean word log-probability, the text's zlib ratio as whisper computes it (37 bytes / 45), greedy
 * decoding, no token ids, no no-speech probability (docs/decisions.md).
 */
const SEGMENTS = [{ id: 0, seek: 0, start: 0.21, end: 2.79, text: HEARD, tokens: [], temperature: 0, avg_logprob: -0.8621, compression_ratio: 0.822, no_speech_prob: 0 }]
/** whisper-1's usage: the recording's 2.99 s, in whole seconds */
const USAGE = { type: 'duration', seconds: 3 }
/** the sandbox's fixed sample transcript (DECISIONS.md "Sandbox") */
const SANDBOX_TEXT = 'Welcome everyone to the weekly planning meeting. First, the launch date: we agreed to ship the beta on March third. ' +
  'Maria will prepare the release notes by Friday. Tom raised a concern about the upload limits, and we decided to keep them at five gigabytes for now. ' +
  'Action item: Tom will write the migration guide before the launch. That is all for today, thank you.'

let t: ReturnType<typeof createTestApp>
let server: ReturnType<typeof Bun.serve>
let baseURL: string
let liveKey: string
let openai: OpenAI

const recording = () => toFile(readFileSync(RECORDING), 'reading.wav', { type: 'audio/wav' })
const tempFolders = () => (existsSync(join(t.config.dataDir, 'tmp')) ? readdirSync(join(t.config.dataDir, 'tmp')) : [])

/** The error the client throws for a call. */
async function failure(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAI.APIError)
    return err as InstanceType<typeof OpenAI.APIError>
  }
  throw new Error('the call succeeded')
}

beforeAll(async () => {
  // NOTESVC_ASR=auto with an empty models folder: PocketSphinx
  t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
  baseURL = `http://127.0.0.1:${server.port}/v1`
  liveKey = await t.key({ email: 'live@example.com' })
  openai = new OpenAI({ baseURL, apiKey: liveKey, maxRetries: 0 })
})
afterAll(() => server.stop(true))

describe('the five response formats', () => {
  test('json (the default): {"text", usage}, charged one credit as createTranscription, X-Credits-Remaining', async () => {
    const { data, response } = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }).withResponse()
    expect(data).toEqual({ text: HEARD, usage: USAGE } as never)
    expect(response.headers.get('content-type')).toStartWith('application/json')
    expect(response.headers.get('x-credits-remaining')).toBe('59')
    const usage = (await t.call('GET', '/v1/usage', { token: liveKey })).body
    expect(usage.recent.map((u: any) => [u.operation, u.credits, u.source])).toEqual([['createTranscription', 1, 'api_key']])
  })

  test('text: the transcript as text/plain', async () => {
    const text = await openai.audio.transcriptions.create({ file: await recording(), model: 'gpt-4o-transcribe', response_format: 'text' })
    expect(text as unknown as string).toBe(`${HEARD}\n`)
  })

  test('srt: SubRip the `subtitle` parser reads, the cue at the segment\'s times', async () => {
    const srt = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'srt' }) as unknown as string
    const cues = parseSubtitles(srt).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    expect(cues.map(c => ({ start: c.start, end: c.end, text: c.text }))).toEqual([{ start: 210, end: 2790, text: HEARD }])
  })

  test('vtt: WebVTT node-webvtt validates strictly', async () => {
    const vtt = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'vtt' }) as unknown as string
    const parsed = parseVtt(vtt, { strict: true })
    expect(parsed.valid).toBe(true)
    expect(parsed.cues.map(c => ({ start: c.start, end: c.end, text: c.text }))).toEqual([{ start: 0.21, end: 2.79, text: HEARD }])
  })

  test('verbose_json: task, language, duration, text, segments with every field, usage', async () => {
    const v = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', language: 'en', prompt: 'Austen', temperature: 0 })
    expect(v).toEqual({ task: 'transcribe', language: 'en', duration: 2.99, text: HEARD, segments: SEGMENTS, usage: USAGE } as never)
  })
})

type Word = { word: string; start: number; end: number; probability?: number }
const timesOf = (words: Word[] | undefined) => words?.map(({ word, start, end }) => ({ word, start, end }))
/** `probability` on every word (beyond OpenAI's fields, as faster-whisper sends it): PocketSphinx's posterior, 0 to 1. */
function expectProbabilities(words: Word[] | undefined) {
  expect(words?.length).toBeGreaterThan(0)
  for (const w of words!) expect([w.word, w.probability! >= 0 && w.probability! <= 1]).toEqual([w.word, true])
}

describe('timestamp granularities', () => {
  test('word and segment: both, the words with PocketSphinx\'s times', async () => {
    const v = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] })
    expect(timesOf(v.words)).toEqual(WORDS)
    expectProbabilities(v.words)
    expect(v.segments as unknown).toEqual(SEGMENTS)
  })

  test('word alone: the words, no segments (as OpenAI answers)', async () => {
    const v = await openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word'] })
    expect(timesOf(v.words)).toEqual(WORDS)
    expectProbabilities(v.words)
    expect(v.segments).toBeUndefined()
  })

  test('word without verbose_json: 400 with a message the client shows, nothing charged', async () => {
    const before = (await t.call('GET', '/v1/usage', { token: liveKey })).body.balance.totalRemaining
    const e = await failure(openai.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'json', timestamp_granularities: ['word'] }))
    expect(e).toBeInstanceOf(OpenAI.BadRequestError)
    expect(e.status).toBe(400)
    expect(e.message).toStartWith('400 The form failed validation: timestamp_granularities[]: word needs response_format verbose_json.')
    expect(e.type).toBe('invalid_request_error')
    expect(e.code).toBe('invalid_request')
    expect((await t.call('GET', '/v1/usage', { token: liveKey })).body.balance.totalRemaining).toBe(before)
  })
})

describe('what PocketSphinx cannot do: 400s before anything is read or charged', () => {
  test('language=de: 400 naming language and the engine, nothing charged', async () => {
    const key = await t.key({ email: 'german@example.com' })
    const e = await failure(new OpenAI({ baseURL, apiKey: key, maxRetries: 0 }).audio.transcriptions.create({ file: await recording(), model: 'whisper-1', language: 'de' }))
    expect(e.status).toBe(400)
    expect(e.code).toBe('invalid_request')
    expect(e.message).toStartWith('400 The form failed validation: language: this server\'s speech engine (pocketsphinx) hears English only. Leave language out or send en;')
    expect((await t.call('GET', '/v1/usage', { token: key })).body.balance.totalRemaining).toBe(60)
  })

  test('translations: 400 naming the engine and what to run instead, nothing charged', async () => {
    const key = await t.key({ email: 'translate@example.com' })
    const e = await failure(new OpenAI({ baseURL, apiKey: key, maxRetries: 0 }).audio.translations.create({ file: await recording(), model: 'whisper-1' }))
    expect(e.status).toBe(400)
    expect(e.message).toContain('this server\'s speech engine (pocketsphinx) cannot translate')
    expect(e.message).toContain('NOTESVC_ASR=whisper')
    expect((await t.call('GET', '/v1/usage', { token: key })).body.balance.totalRemaining).toBe(60)
  })

  test('the models list names PocketSphinx beside whisper-1', async () => {
    expect((await openai.models.list()).data.map(m => m.id)).toEqual(['whisper-1', 'pocketsphinx', 'gpt-4o-transcribe-diarize'])
  })
})

describe('keys and credits', () => {
  test('a sandbox key: the fixed sample transcript, nothing charged', async () => {
    const sandbox = new OpenAI({ baseURL, apiKey: await t.key({ email: 'live@example.com', sandbox: true }), maxRetries: 0 })
    const { data, response } = await sandbox.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }).withResponse()
    expect(data).toEqual({ text: SANDBOX_TEXT, usage: { type: 'duration', seconds: 29 } } as never)
    expect(response.headers.get('x-credits-remaining')).not.toBeNull()
    const v = await sandbox.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word'] })
    expect(v.duration).toBe(28.4)
    expect(v.words!.slice(0, 2)).toEqual([{ word: 'Welcome', start: 0, end: 0.6 }, { word: 'everyone', start: 0.6, end: 1.2 }])
  })

  test('402 when no credit is left: the message says how many remain, nothing is read or charged', async () => {
    const key = await t.key({ email: 'broke@example.com' })
    const account = await t.services.accounts.requireAccount('broke@example.com')
    await t.services.credits.charge({ accountId: account.id, operation: 'setup', credits: 60, source: 'api_key' })
    const broke = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 })
    const e = await failure(broke.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }))
    expect(e.status).toBe(402)
    expect(e.code).toBe('insufficient_credits')
    expect(e.message).toStartWith('402 createTranscription needs 1 credit but 0 remain.')
  })

  test('401 with a bad key and without a key, as AuthenticationError with the envelope\'s message', async () => {
    const bad = new OpenAI({ baseURL, apiKey: 'svc_live_not-a-real-key', maxRetries: 0 })
    const e = await failure(bad.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }))
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(e.code).toBe('invalid_token')
    expect(e.message).toMatch(/^401 \S/)
    // no Authorization header at all (the client's own header removed)
    const none = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, defaultHeaders: { Authorization: null } })
    const e2 = await failure(none.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }))
    expect(e2).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(e2.code).toBe('invalid_token')
  })

  test('a key without transcriptions:write: 403', async () => {
    const reader = new OpenAI({ baseURL, apiKey: await t.key({ email: 'live@example.com', scopes: ['notes:read'] }), maxRetries: 0 })
    const e = await failure(reader.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }))
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError)
    expect(e.code).toBe('insufficient_scope')
  })

  test('a key with transcriptions:write alone is enough: the transcript', async () => {
    const scoped = new OpenAI({ baseURL, apiKey: await t.key({ email: 'scoped@example.com', scopes: ['transcriptions:write'] }), maxRetries: 0 })
    expect(await scoped.audio.transcriptions.create({ file: await recording(), model: 'whisper-1' })).toEqual({ text: HEARD, usage: USAGE } as never)
  })

  test('a key with every other scope but not transcriptions:write: 403 naming it, nothing charged', async () => {
    const everyOther = await t.key({ email: 'scoped@example.com', scopes: ['notes:read', 'notes:write', 'folders:read', 'folders:write', 'summaries:write', 'usage:read'] })
    const before = (await t.call('GET', '/v1/usage', { token: everyOther })).body.balance.totalRemaining
    const e = await failure(new OpenAI({ baseURL, apiKey: everyOther, maxRetries: 0 }).audio.transcriptions.create({ file: await recording(), model: 'whisper-1' }))
    expect(e.status).toBe(403)
    expect(e.code).toBe('insufficient_scope')
    expect(e.headers?.get('www-authenticate')).toContain('scope="transcriptions:write"')
    expect((await t.call('GET', '/v1/usage', { token: everyOther })).body.balance.totalRemaining).toBe(before)
  })
})

describe('the charge for a recording over a minute', () => {
  /** the published rule (SPEC "Credits"): one credit per started minute of media; a minute exactly is one */
  test.each([
    { seconds: 61, credits: 2 },
    { seconds: 60, credits: 1 },
  ])('a recording of $seconds s: $credits charged, in X-Credits-Remaining and the usage', async ({ seconds, credits }) => {
    const email = `minutes-${seconds}@example.com`
    const key = await t.key({ email })
    const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 })
    const pcm = new Int16Array(speechWav(seconds).slice(44).buffer, 0, seconds * 16_000)
    const file = await toFile(wavFromPcm(pcm, 16_000), `talk-${seconds}s.wav`, { type: 'audio/wav' })
    const { data, response } = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'verbose_json' }).withResponse()
    expect(data.duration).toBe(seconds)
    expect(data.text.split(' ').length).toBeGreaterThan(seconds) // speech heard throughout, not a stub
    expect(response.headers.get('x-credits-remaining')).toBe(String(60 - credits))
    const usage = (await t.call('GET', '/v1/usage', { token: key })).body
    expect(usage.recent.map((u: any) => [u.operation, u.credits])).toEqual([['createTranscription', credits]])
    expect(usage.balance.totalRemaining).toBe(60 - credits)
  }, 120_000)
})

describe('a file that is not audio', () => {
  const folder = tempDir('notesvc-not-audio-')
  afterAll(() => folder.remove())
  /** a live key's refusal of a file it cannot read as audio (nothing charged), and what a sandbox key must get too */
  const REFUSAL = { status: 400, code: 'invalid_request', type: 'invalid_request_error', message: /^400 The form failed validation: file: is not audio or video that ffmpeg can read: [\s\S]*\. Send a recording [\s\S]*Nothing was charged\.$/ }
  const random = seededRandom(22)
  const notAudio = [
    ['a text file', 'notes.txt', 'text/plain', new TextEncoder().encode('Minutes of the meeting.\nWe agreed to ship on Friday.\n'.repeat(40))],
    ['random bytes named x.mp3', 'x.mp3', 'audio/mpeg', Uint8Array.from({ length: 16_384 }, () => Math.floor(random() * 256))],
  ] as const

  const refusalOf = async (apiKey: string, name: string, type: string, bytes: Uint8Array) => {
    const e = await failure(new OpenAI({ baseURL, apiKey, maxRetries: 0 }).audio.transcriptions.create({ file: await toFile(bytes, name, { type }), model: 'whisper-1' }))
    return { status: e.status, code: e.code, type: e.type, message: e.message }
  }

  test.each(notAudio)('%s: the sandbox key gets the refusal a live key gets, not the sample', async (_what, name, type, bytes) => {
    const key = await t.key({ email: 'not-audio@example.com' })
    const live = await refusalOf(key, name, type, bytes)
    expect(live).toMatchObject({ ...REFUSAL, message: expect.stringMatching(REFUSAL.message) })
    expect((await t.call('GET', '/v1/usage', { token: key })).body.balance.totalRemaining).toBe(60)
    const sandbox = await refusalOf(await t.key({ email: 'not-audio@example.com', sandbox: true }), name, type, bytes)
    expect(sandbox).toMatchObject({ ...REFUSAL, message: expect.stringMatching(REFUSAL.message) })
  })

  test('real audio in another format (MP3 by ffmpeg) still gets the sample on a sandbox key, free', async () => {
    const mp3 = join(folder.path, 'reading.mp3')
    expect((await run(['ffmpeg', '-v', 'error', '-i', RECORDING, mp3])).code).toBe(0)
    const sandbox = new OpenAI({ baseURL, apiKey: await t.key({ email: 'not-audio@example.com', sandbox: true }), maxRetries: 0 })
    const { data, response } = await sandbox.audio.transcriptions.create({ file: await toFile(readFileSync(mp3), 'reading.mp3', { type: 'audio/mpeg' }), model: 'whisper-1' }).withResponse()
    expect(data).toEqual({ text: SANDBOX_TEXT, usage: { type: 'duration', seconds: 29 } } as never)
    expect(response.headers.get('x-credits-remaining')).toBe('60')
    const v = await sandbox.audio.transcriptions.create({ file: await toFile(readFileSync(mp3), 'reading.mp3', { type: 'audio/mpeg' }), model: 'whisper-1', response_format: 'verbose_json' })
    expect(v.duration).toBe(28.4) // the sample's, not the file's
  })
})

describe('the form', () => {
  const post = (form: FormData, token = liveKey) => fetch(`${baseURL}/audio/transcriptions`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } })
  const withFile = (fields: Record<string, string> = {}) => {
    const f = new FormData()
    f.append('file', new File([readFileSync(RECORDING)], 'reading.wav', { type: 'audio/wav' }))
    for (const [k, v] of Object.entries(fields)) f.append(k, v)
    return f
  }

  test.each([
    ['no file', (() => { const f = new FormData(); f.append('model', 'whisper-1'); return f })(), 'file', 'is required'],
    ['an unknown response_format', withFile({ response_format: 'xml' }), 'response_format', 'must be one of json, text, srt, vtt, verbose_json, diarized_json'],
    ['a temperature above 1', withFile({ temperature: '1.5' }), 'temperature', 'must be a number from 0 to 1'],
    ['a temperature that is no number', withFile({ temperature: 'warm' }), 'temperature', 'must be a number from 0 to 1'],
    ['an unknown granularity', withFile({ response_format: 'verbose_json', 'timestamp_granularities[]': 'sentence' }), 'timestamp_granularities[]', 'each must be segment or word'],
    ['a misspelt field', withFile({ respons_format: 'srt' }), 'respons_format', 'is not a field of this form'],
    ['stream=true', withFile({ stream: 'true' }), 'stream', 'streaming is not offered; send false or leave it out'],
  ] as const)('%s: 400 naming the field', async (_what, form, field, issue) => {
    const res = await post(form as FormData)
    expect(res.status).toBe(400)
    const body = await res.json() as any
    expect(body.error.code).toBe('invalid_request')
    expect(body.error.details).toContainEqual({ field, issue })
  })

  test('a JSON body instead of a form: 400 saying to send multipart/form-data', async () => {
    const res = await fetch(`${baseURL}/audio/transcriptions`, { method: 'POST', body: JSON.stringify({ model: 'whisper-1' }), headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expect(((await res.json()) as any).error.message).toContain('multipart/form-data')
  })

  test('the temporary files are gone after every request, answered or refused', () => {
    expect(tempFolders()).toEqual([])
  })

  test('over the size bound: 413 payload_too_large, the rest of the body not read', async () => {
    const big = new FormData()
    big.append('model', 'whisper-1')
    big.append('file', new File([new Uint8Array(200_000)], 'big.wav', { type: 'audio/wav' }))
    const request = new Request('http://localhost/', { method: 'POST', body: big })
    const dir = join(t.config.dataDir, 'limit-test')
    mkdirSync(dir, { recursive: true })
    const err = await receiveMultipart(request, join(dir, 'upload'), { fileField: 'file', maxFileBytes: 100_000, maxFieldBytes: 1000, maxFields: 8 }).then(() => null, e => e)
    expect(err?.code).toBe('payload_too_large')
    expect(err?.status).toBe(413)
  })
})

/** Files this process holds open that were deleted while open (their disk space is not freed). */
function deletedButOpen(): string[] {
  return readdirSync('/proc/self/fd').map(fd => { try { return readlinkSync(`/proc/self/fd/${fd}`) } catch { return '' } }).filter(l => l.endsWith(' (deleted)'))
}

describe('a form cut short', () => {
  const boundary = 'notesvcboundary'
  const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`)
  const limits = { fileField: 'file', maxFileBytes: 10_000_000, maxFieldBytes: 1000, maxFields: 8 }
  const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` }

  test('the client drops mid-file: 400, and the partly written file is closed before its folder is removed', async () => {
    const dir = join(t.config.dataDir, 'aborted-test')
    mkdirSync(dir, { recursive: true })
    const body = new ReadableStream<Uint8Array>({
      start(c) { c.enqueue(head); c.enqueue(new Uint8Array(64_000)) },
      pull(c) { c.error(new Error('connection reset by peer')) },
    })
    const err = await receiveMultipart(new Request('http://localhost/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit), join(dir, 'upload'), limits).then(() => null, e => e)
    expect(err?.status).toBe(400)
    rmSync(dir, { recursive: true, force: true })
    expect(deletedButOpen().filter(l => l.includes('aborted-test'))).toEqual([])
  })

  test('the body ends before the closing boundary: 400, and no rejection left unhandled', async () => {
    const dir = join(t.config.dataDir, 'truncated-test')
    mkdirSync(dir, { recursive: true })
    const body = new Blob([head, new Uint8Array(10_000)])
    const unhandled: unknown[] = []
    const onUnhandled = (e: unknown) => { unhandled.push(e) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const err = await receiveMultipart(new Request('http://localhost/', { method: 'POST', body, headers }), join(dir, 'upload'), limits).then(() => null, e => e)
      expect(err?.status).toBe(400)
      await Bun.sleep(50)
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('an engine without word times (whisper.cpp gives segment times only)', () => {
  test('word granularity: 400 before anything is read or charged, saying which engine gives them', async () => {
    const rec = recordingEngine() // segment times only, like the whisper.cpp binding
    const w = createTestApp({ engines: { asr: () => rec.engine } })
    const srv = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => w.app.handle(r) })
    try {
      const client = new OpenAI({ baseURL: `http://127.0.0.1:${srv.port}/v1`, apiKey: await w.key(), maxRetries: 0 })
      const e = await failure(client.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word'] }))
      expect(e.status).toBe(400)
      expect(e.message).toContain('does not give word times')
      expect(rec.calls).toHaveLength(0)
      // segments it has: those work
      const v = await client.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['segment'] })
      expect(v.segments!.length).toBeGreaterThan(0)
      expect(v.words).toBeUndefined()
    } finally {
      srv.stop(true)
    }
  })
})

describe('temporary files a crashed process left', () => {
  test('are swept at start: a dead process\'s folder goes, a live one\'s stays', async () => {
    const root = join(t.config.dataDir, 'tmp')
    const dead = Bun.spawnSync(['true']).pid // a process that has exited
    mkdirSync(join(root, `openai-${dead}-abc`, 'x'), { recursive: true })
    mkdirSync(join(root, `openai-${process.pid}-def`), { recursive: true })
    expect(await t.services.openai.sweepTemporaryFiles()).toEqual({ folders: 1 })
    expect(tempFolders()).toEqual([`openai-${process.pid}-def`])
  })
})

describe('the OpenAPI document and MCP', () => {
  test('the operation is published with its multipart form and the answers of each response_format', async () => {
    const doc = (await t.call('GET', '/v1/openapi.json')).body
    const op = doc.paths['/v1/audio/transcriptions'].post
    expect(op.operationId).toBe('createAudioTranscription')
    expect(op['x-service-credits']).toBe('1 per started minute')
    expect(op.security).toEqual([{ apiKey: ['transcriptions:write'] }, { oauth2: ['transcriptions:write'] }])
    expect(Object.keys(op.requestBody.content)).toEqual(['multipart/form-data'])
    const form = doc.components.schemas.OpenAiTranscriptionRequest
    expect(Object.keys(form.properties)).toEqual(['file', 'model', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities[]', 'known_speaker_names[]'])
    expect(form.required).toEqual(['file'])
    expect(Object.keys(op.responses['200'].content)).toEqual(['application/json', 'text/plain', 'application/x-subrip', 'text/vtt'])
    const transcript = doc.paths['/v1/notes/{id}/transcript'].get
    expect(transcript.parameters.find((p: any) => p.name === 'format').schema.enum).toEqual(['json', 'verbose_json', 'diarized_json', 'srt', 'vtt', 'txt'])
    expect(Object.keys(transcript.responses['200'].content)).toEqual(['application/json', 'application/x-subrip', 'text/vtt', 'text/plain'])
  })

  test('the MCP tool takes the recording as base64 (a tool call carries no file); charged as createTranscription with source mcp', async () => {
    const key = await t.key({ email: 'agent@example.com' })
    const client = new Client({ name: 'notesvc-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
    try {
      const r = await client.callTool({ name: 'createAudioTranscription', arguments: { audio: readFileSync(RECORDING).toString('base64'), model: 'whisper-1', response_format: 'srt' } }) as any
      expect(r.isError).toBeFalsy()
      const result = r.structuredContent ?? JSON.parse(r.content[0].text)
      expect(result.content).toBe(`1\n00:00:00,210 --> 00:00:02,790\n${HEARD}\n`)
      // an https URL follows createTranscription's rules: a private address is refused
      const refused = await client.callTool({ name: 'createAudioTranscription', arguments: { audioUrl: 'https://127.0.0.1/memo.wav' } }) as any
      expect(refused.isError).toBe(true)
      // the transcript formats through getNoteTranscript's tool: text formats as {format, contentType, content}
      const note = await client.callTool({ name: 'createNote', arguments: { title: 'Minutes', content: 'Budget approved.\n\nHiring: two engineers.' } }) as any
      const noteId = (note.structuredContent ?? JSON.parse(note.content[0].text)).id
      const txt = await client.callTool({ name: 'getNoteTranscript', arguments: { id: noteId, format: 'txt' } }) as any
      expect(txt.structuredContent ?? JSON.parse(txt.content[0].text)).toEqual({ noteId, format: 'txt', contentType: 'text/plain; charset=utf-8', content: 'Budget approved.\n\nHiring: two engineers.\n' })
      const srtOfText = await client.callTool({ name: 'getNoteTranscript', arguments: { id: noteId, format: 'srt' } }) as any
      expect(srtOfText.isError).toBe(true)
      expect(JSON.stringify(srtOfText.content)).toContain('created from text')
      const both = await client.callTool({ name: 'createAudioTranscription', arguments: {} }) as any
      expect(both.isError).toBe(true)
      expect(JSON.stringify(both.content)).toContain('give exactly one of audio (base64) and audioUrl')
    } finally {
      await client.close()
    }
    const usage = (await t.call('GET', '/v1/usage', { token: key })).body
    expect(usage.recent.map((u: any) => [u.operation, u.credits, u.source])).toEqual([['createTranscription', 1, 'mcp']])
  })
})
