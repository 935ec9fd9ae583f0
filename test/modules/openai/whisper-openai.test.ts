import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import OpenAI, { toFile } from 'openai'
import type { TranslationVerbose } from 'openai/resources/audio/translations'
import type { AsrEngine, TranscribeOptions } from '../../../src/engines/asr/engine'
import { createWhisperEngine } from '../../../src/engines/asr/whisper'
import { createTestApp } from '../../helpers/app'
import { tempDir } from '../../helpers/process'
import { writeTinyWhisperModel } from '../../fixtures/ggml-model'

// OpenAI's official client against notesvc running whisper.cpp on the generated tiny model (random
// weights: the words are nonsense, but whisper.cpp really decodes them). The engine is wrapped only to
// see the options each chunk was transcribed with.

setDefaultTimeout(120_000)

const RECORDING = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav'
const recording = () => toFile(readFileSync(RECORDING), 'reading.wav', { type: 'audio/wav' })

const dir = tempDir('notesvc-whisper-openai-')
const models = join(dir.path, 'models')

/** The whisper engine on a model, with the options of every chunk it was asked to transcribe. */
function watched(modelFile: string) {
  const inner = createWhisperEngine({ modelPath: join(models, modelFile), threads: 1 })
  const calls: TranscribeOptions[] = []
  const engine: AsrEngine = {
    name: inner.name,
    translates: inner.translates,
    englishOnly: () => inner.englishOnly!(),
    ready: () => inner.ready(),
    transcribeChunk: (samples, opts) => {
      calls.push({ ...opts, signal: undefined })
      return inner.transcribeChunk(samples, opts)
    },
  }
  return { engine, calls }
}

function serve(engine: AsrEngine, env: Record<string, string> = {}) {
  const app = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', ...env }, config: { modelsDir: models }, engines: { asr: () => engine } })
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => app.app.handle(r) })
  return { app, server, baseURL: `http://127.0.0.1:${server.port}/v1` }
}

async function failure(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAI.APIError)
    return err as InstanceType<typeof OpenAI.APIError>
  }
  throw new Error('the call succeeded')
}

let multi: ReturnType<typeof watched>
let english: ReturnType<typeof watched>
let m: ReturnType<typeof serve>
let en: ReturnType<typeof serve>
let client: OpenAI
let enClient: OpenAI

beforeAll(async () => {
  mkdirSync(models, { recursive: true })
  writeTinyWhisperModel(join(models, 'ggml-tiny-random.bin'))
  writeTinyWhisperModel(join(models, 'ggml-tiny-random.en.bin'), { multilingual: false })
  multi = watched('ggml-tiny-random.bin')
  english = watched('ggml-tiny-random.en.bin')
  m = serve(multi.engine)
  en = serve(english.engine, { NOTESVC_DIARIZATION: 'off' })
  client = new OpenAI({ baseURL: m.baseURL, apiKey: await m.app.key({ plan: 'pro' }), maxRetries: 0 })
  enClient = new OpenAI({ baseURL: en.baseURL, apiKey: await en.app.key({ plan: 'pro' }), maxRetries: 0 })
})
afterAll(() => {
  m.server.stop(true)
  en.server.stop(true)
  dir.remove()
})

describe('GET /v1/models', () => {
  test('OpenAI\'s list: whisper-1, the installed whisper.cpp models, the diarization model when diarization is on', async () => {
    const page = await client.models.list()
    expect(page.data.map(x => x.id)).toEqual(['whisper-1', 'tiny-random', 'tiny-random.en', 'gpt-4o-transcribe-diarize'])
    for (const x of page.data) {
      expect(x.object).toBe('model')
      expect(x.owned_by).toBe('notesvc')
      expect(Number.isInteger(x.created)).toBe(true)
      expect(x.created).toBeGreaterThan(1_700_000_000)
    }
    // NOTESVC_DIARIZATION=off: no diarization model
    expect((await enClient.models.list()).data.map(x => x.id)).toEqual(['whisper-1', 'tiny-random', 'tiny-random.en'])
  })

  test('a credential is needed: 401 without one', async () => {
    const anonymous = new OpenAI({ baseURL: m.baseURL, apiKey: 'nsk_wrong', maxRetries: 0 })
    expect((await failure(anonymous.models.list())).status).toBe(401)
  })
})

describe('transcriptions with whisper.cpp', () => {
  test('verbose_json: whisper\'s segments with seek, greedy temperature, zlib ratio; the prompt goes to whisper.cpp', async () => {
    multi.calls.length = 0
    const v = await client.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json', prompt: 'Marianne Dashwood', language: 'en' })
    expect((v as unknown as { task: string }).task).toBe('transcribe') // OpenAI answers it, its type leaves it out
    expect(v.usage).toEqual({ type: 'duration', seconds: 3 })
    expect(v.segments!.length).toBeGreaterThan(0)
    for (const s of v.segments!) {
      expect(s.seek).toBe(0)
      expect(s.temperature).toBe(0)
      expect(s.tokens).toEqual([])
      expect(s.no_speech_prob).toBe(0)
      expect(s.avg_logprob).toBe(0)
      expect(s.compression_ratio).toBeGreaterThan(0)
    }
    expect(multi.calls.map(c => [c.prompt, c.translate ?? false])).toEqual([['Marianne Dashwood', false]])
  })

  test('include[]=logprobs: 400 naming include[], nothing transcribed', async () => {
    multi.calls.length = 0
    const e = await failure(client.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', include: ['logprobs'] }))
    expect(e.status).toBe(400)
    expect(e.message).toContain('include[]: logprobs are not available')
    expect(e.message).toContain('leave include[] out')
    expect(multi.calls).toEqual([])
  })

  test('language=de with an English-only (.en) model: 400 naming language, nothing charged', async () => {
    const key = await en.app.key({ email: 'de@example.com' })
    const c = new OpenAI({ baseURL: en.baseURL, apiKey: key, maxRetries: 0 })
    english.calls.length = 0
    const e = await failure(c.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', language: 'de' }))
    expect(e.status).toBe(400)
    expect(e.message).toContain('language: this server\'s speech engine (whisper) hears English only')
    expect(e.message).toContain('not a .en model')
    expect(english.calls).toEqual([])
    expect((await en.app.call('GET', '/v1/usage', { token: key })).body.balance.totalRemaining).toBe(60)
    // the same model takes English
    expect((await c.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', language: 'en' })).usage).toEqual({ type: 'duration', seconds: 3 })
  })

  test('language=de with a multilingual model is transcribed as German', async () => {
    multi.calls.length = 0
    const v = await client.audio.transcriptions.create({ file: await recording(), model: 'whisper-1', language: 'de', response_format: 'verbose_json' })
    expect(v.language).toBe('de')
    expect(multi.calls.map(c => c.language)).toEqual(['de'])
  })
})

describe('POST /v1/audio/translations', () => {
  test('json: {text}, whisper.cpp asked for its translate task, charged as a transcription', async () => {
    const key = await m.app.key({ email: 'translate@example.com' })
    const c = new OpenAI({ baseURL: m.baseURL, apiKey: key, maxRetries: 0 })
    multi.calls.length = 0
    const { data, response } = await c.audio.translations.create({ file: await recording(), model: 'whisper-1', prompt: 'Elinor' }).withResponse()
    expect(Object.keys(data)).toEqual(['text'])
    expect(data.text.length).toBeGreaterThan(0)
    expect(multi.calls.map(c => [c.translate, c.prompt])).toEqual([[true, 'Elinor']])
    expect(response.headers.get('x-credits-remaining')).toBe('59')
    const usage = (await m.app.call('GET', '/v1/usage', { token: key })).body
    expect(usage.recent.map((u: any) => [u.operation, u.credits])).toEqual([['createTranscription', 1]])
  })

  test('verbose_json: task translate, the language heard, segments with every field, usage', async () => {
    // the client's overloads cannot tell the formats of translations apart: its TranslationVerbose
    const v = await client.audio.translations.create({ file: await recording(), model: 'whisper-1', response_format: 'verbose_json' }) as unknown as TranslationVerbose
    expect(v).toMatchObject({ task: 'translate', duration: 2.99, usage: { type: 'duration', seconds: 3 } })
    expect(v.language).toMatch(/^[a-z]{2,3}$/)
    expect(Object.keys(v.segments![0]!).sort()).toEqual(['avg_logprob', 'compression_ratio', 'end', 'id', 'no_speech_prob', 'seek', 'start', 'temperature', 'text', 'tokens'])
  })

  test('srt and text come back as text', async () => {
    const srt = await client.audio.translations.create({ file: await recording(), model: 'whisper-1', response_format: 'srt' }) as unknown as string
    expect(srt).toStartWith('1\n00:00:')
  })

  test('language is not a field of translations (OpenAI\'s form has none): 400 naming it', async () => {
    const form = new FormData()
    form.set('file', new Blob([readFileSync(RECORDING)], { type: 'audio/wav' }), 'reading.wav')
    form.set('model', 'whisper-1')
    form.set('language', 'de')
    const res = await fetch(`${m.baseURL}/audio/translations`, { method: 'POST', body: form, headers: { authorization: `Bearer ${await m.app.key()}` } })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toContain('language: is not a field of this form')
  })

  test('a file that is not audio: 400 naming file, nothing charged', async () => {
    const key = await m.app.key({ email: 'text@example.com' })
    const c = new OpenAI({ baseURL: m.baseURL, apiKey: key, maxRetries: 0 })
    const e = await failure(c.audio.translations.create({ file: await toFile(new TextEncoder().encode('not a recording\n'.repeat(50)), 'notes.txt', { type: 'text/plain' }), model: 'whisper-1' }))
    expect(e.status).toBe(400)
    expect(e.message).toContain('file: is not audio or video that ffmpeg can read')
    expect((await m.app.call('GET', '/v1/usage', { token: key })).body.balance.totalRemaining).toBe(60)
  })
})

describe('MCP tools', () => {
  test('createAudioTranslation takes base64 audio and runs whisper\'s translate task; listModels lists; a non-audio file names `audio`', async () => {
    const key = await m.app.key({ email: 'agent@example.com' })
    const mcp = new Client({ name: 'notesvc-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${m.server.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
    try {
      multi.calls.length = 0
      const r = await mcp.callTool({ name: 'createAudioTranslation', arguments: { audio: readFileSync(RECORDING).toString('base64'), response_format: 'verbose_json', prompt: 'Elinor' } }) as any
      expect(r.isError).toBeFalsy()
      expect((r.structuredContent ?? JSON.parse(r.content[0].text)).task).toBe('translate')
      expect(multi.calls.map(c => [c.translate, c.prompt])).toEqual([[true, 'Elinor']])
      const list = await mcp.callTool({ name: 'listModels', arguments: {} }) as any
      expect((list.structuredContent ?? JSON.parse(list.content[0].text)).data.map((x: any) => x.id)).toContain('tiny-random')
      const text = await mcp.callTool({ name: 'createAudioTranscription', arguments: { audio: Buffer.from('not a recording\n'.repeat(50)).toString('base64') } }) as any
      expect(text.isError).toBe(true)
      expect(JSON.stringify(text.content)).toContain('audio: is not audio or video that ffmpeg can read')
    } finally {
      await mcp.close()
    }
    const usage = (await m.app.call('GET', '/v1/usage', { token: key })).body
    expect(usage.recent.map((u: any) => [u.operation, u.credits, u.source])).toEqual([['createTranscription', 1, 'mcp']])
  })
})
