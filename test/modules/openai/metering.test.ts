import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import OpenAI, { toFile } from 'openai'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { recordingEngine } from '../../helpers/engines'
import { speechWav } from '../../fixtures/speech'

// The operator of a fresh install, calling their own server with the official `openai` client and the
// first start's live key: metering on (the default) holds them to the interface's per-credential
// processing limit of 10 a minute; NOTESVC_METERING=off charges nothing and limits no processing.
// With metering on, the calls are heard by the real PocketSphinx (installed here and in CI); the other
// cases use a recording engine (the route, the charge and the limit are what they test; 30 real
// transcriptions take about a minute on a 2-core machine).

setDefaultTimeout(60_000)

const OWNER = 'owner@localhost'
/** SPEC "Rate limits": processing requests per credential per minute */
const PROCESSING_PER_MINUTE = 10
const CALLS = 30
const WAV = speechWav(2)

/** A fresh install (first start) served on loopback, on back end `b`, with NOTESVC_METERING as given. */
async function freshInstall(b: (typeof backEnds)[number], metering: 'on' | 'off' | undefined) {
  const rec = recordingEngine()
  const t = createTestApp({ store: await b.open(), engines: { asr: () => rec.engine }, env: { NOTESVC_ASR: 'pocketsphinx', NOTESVC_DIARIZATION: 'off', ...(metering ? { NOTESVC_METERING: metering } : {}) } })
  const keys = (await t.services.accounts.createFirstStartOwner(OWNER))!
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: r => t.app.handle(r) })
  const openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: keys.live, maxRetries: 0 })
  /** the status of each of `CALLS` transcriptions, made one after another */
  const retryAfter: (string | null)[] = []
  async function transcribeMany(): Promise<number[]> {
    const statuses: number[] = []
    for (let i = 0; i < CALLS; i++) {
      try {
        await openai.audio.transcriptions.create({ file: await toFile(WAV, 'talk.wav', { type: 'audio/wav' }), model: 'whisper-1' })
        statuses.push(200)
      } catch (err) {
        if (!(err instanceof OpenAI.APIError)) throw err
        statuses.push(err.status ?? -1)
        retryAfter.push(err.headers?.get('retry-after') ?? null)
      }
    }
    return statuses
  }
  const usage = async () => (await t.call('GET', '/v1/usage', { token: keys.live })).body
  return { t, keys, openai, usage, transcribeMany, retryAfter, baseURL: `http://127.0.0.1:${server.port}/v1`, close: async () => { server.stop(true); await t.store.close() } }
}

for (const b of backEnds) describe.skipIf(b.skip)(`the operator and metering on ${b.name}`, () => {
  test('a fresh start: the owner is on the pro plan, a second start creates no one', async () => {
    const install = await freshInstall(b, undefined)
    try {
      const u = await install.usage()
      expect(u.balance.plan).toBe('pro')
      expect(u.balance.totalRemaining).toBe(2000)
      expect(await install.t.services.accounts.createFirstStartOwner(OWNER)).toBeNull()
    } finally {
      await install.close()
    }
  })

  test('metering on (the default): 30 OpenAI-client calls in a minute, the 11th and later get 429 with Retry-After', async () => {
    // the recording engine, as below: ten real PocketSphinx runs took over the test's minute on a busy
    // 2-core machine (and past the limit's window, which would then let the 11th through); the real
    // engine's charges are tested in openai-compatible.test.ts
    const install = await freshInstall(b, undefined)
    try {
      const statuses = await install.transcribeMany()
      expect(statuses).toEqual([...Array(PROCESSING_PER_MINUTE).fill(200), ...Array(CALLS - PROCESSING_PER_MINUTE).fill(429)])
      expect(install.retryAfter.every(s => Number(s) >= 1 && Number(s) <= 60)).toBe(true)
      const u = await install.usage()
      // 2 s of speech: one started minute, one credit a call
      expect(u.balance.totalRemaining).toBe(2000 - PROCESSING_PER_MINUTE)
    } finally {
      await install.close()
    }
  })

  test('NOTESVC_METERING=off: all 30 answer 200, each recorded with 0 credits, the balance untouched', async () => {
    // a recording engine: 30 real PocketSphinx transcriptions take about 2 s each on this 2-core machine
    const install = await freshInstall(b, 'off')
    try {
      const statuses = await install.transcribeMany()
      expect(statuses).toEqual(Array(CALLS).fill(200))
      // not counted, so no limit to report
      const { response } = await install.openai.audio.transcriptions.create({ file: await toFile(WAV, 'talk.wav', { type: 'audio/wav' }), model: 'whisper-1' }).withResponse()
      expect([response.status, response.headers.get('x-ratelimit-limit')]).toEqual([200, null])
      const u = await install.usage()
      expect(u.balance.totalRemaining).toBe(2000)
      expect(u.recent).toHaveLength(CALLS + 1)
      expect(new Set(u.recent.map((r: { operation: string; credits: number }) => `${r.operation} ${r.credits}`))).toEqual(new Set(['createTranscription 0']))
    } finally {
      await install.close()
    }
  })

  test('NOTESVC_METERING=off never answers 402: a free account with its grant spent still transcribes, for 0 credits', async () => {
    const install = await freshInstall(b, 'off')
    try {
      const { key } = await install.t.services.accounts.createKey({ email: 'free@example.com', plan: 'free' })
      const account = await install.t.services.accounts.requireAccount('free@example.com')
      // its whole monthly grant spent (60 credits), nothing prepaid
      await install.t.services.credits.charge({ accountId: account.id, operation: 'createTranscription', credits: 60, source: 'api_key' })
      const client = new OpenAI({ baseURL: install.baseURL, apiKey: key, maxRetries: 0 })
      const result = await client.audio.transcriptions.create({ file: await toFile(WAV, 'talk.wav', { type: 'audio/wav' }), model: 'whisper-1' })
      expect(result.text).toContain('Heard')
      const u = (await install.t.call('GET', '/v1/usage', { token: key })).body
      expect(u.balance.totalRemaining).toBe(0)
      expect(u.recent[0]).toMatchObject({ operation: 'createTranscription', credits: 0 })
    } finally {
      await install.close()
    }
  })

  test('NOTESVC_METERING=off keeps the write limit: the 31st write in a minute gets 429', async () => {
    const install = await freshInstall(b, 'off')
    try {
      const statuses: number[] = []
      for (let i = 0; i < 31; i++) statuses.push((await install.t.call('POST', '/v1/folders', { token: install.keys.live, body: { name: `f${i}` } })).status)
      expect(statuses.slice(0, 30).every(s => s === 201)).toBe(true)
      expect(statuses[30]).toBe(429)
    } finally {
      await install.close()
    }
  })
})
