import { ConfigError, integer, type Env } from '../../environment'
import type { DoctorCheck, SpeechEngineAdapter } from './adapter'
import { AsrUnavailableError, SAMPLE_RATE, type AsrEngine, type ChunkTranscription, type SpeechServerStatus, type TimedWord, type TranscribeOptions, type TranscriptSegment } from './engine'

/**
 * `NOTESVC_ASR=remote`: each chunk of a recording (at most 45 s, chunked.ts) is sent as a WAV to an
 * OpenAI-compatible transcription server (another notesvc's POST /v1/audio/transcriptions, speaches,
 * whisper.cpp's server, OpenAI itself) with `response_format=verbose_json` and word and segment
 * times, and its segments and words are read back: one GPU machine behind many notesvc nodes.
 * Diarization stays local: it is fed the same chunks beside transcription.
 *
 * Plain fetch with a multipart body, not the `openai` package: the protocol is one POST and one JSON
 * answer, the failures must become a note's message anyway, and the package would add 0.67 MB of
 * JavaScript (measured with bun build) to a binary kept under 130 MB for this one call.
 *
 * A refused connection, no answer within NOTESVC_ASR_TIMEOUT_SECONDS, 408, 429 and 5xx are tried
 * again, ATTEMPTS times a chunk in all; a refused key or another refusal is not. When it gives up it
 * throws AsrUnavailableError saying what happened and what to do: an upload's job ends with
 * `engine_unavailable` and its credits are refunded; a synchronous route answers 502, nothing charged.
 * It is never picked by NOTESVC_ASR=auto: sending recordings to another machine is the operator's
 * decision.
 */

interface RemoteSettings {
  /** the OpenAI base URL, without a trailing slash: `http://gpu.internal:8080/v1` */
  url: string
  key?: string
  model: string
  timeoutMs: number
}

const ATTEMPTS = 3
/** waits before the second and third tries; a 429 or 503's Retry-After is honoured up to MAX_WAIT_MS */
const BACKOFF_MS = [500, 2000]
const MAX_WAIT_MS = 30_000
/** how long health trusts the last answer before asking the server again (in the background) */
const RECHECK_MS = 30_000
const PROBE_TIMEOUT_MS = 3000

/** The URL as doctor and health show it: no user, password or query (a key is never shown). */
function shown(url: string): string {
  const u = new URL(url)
  return `${u.protocol}//${u.host}${u.pathname}`.replace(/\/+$/, '')
}

function remoteSettings(env: Env, chosen: boolean): RemoteSettings | null {
  const raw = env.NOTESVC_ASR_URL
  if (!chosen) {
    if (raw) throw new ConfigError(`NOTESVC_ASR_URL is set, but NOTESVC_ASR=${env.NOTESVC_ASR || 'auto'} does not use it: set NOTESVC_ASR=remote to send speech to that server, or unset NOTESVC_ASR_URL`)
    return null
  }
  if (!raw) throw new ConfigError('NOTESVC_ASR=remote needs NOTESVC_ASR_URL: the base URL of an OpenAI-compatible transcription server, such as http://gpu.internal:8080/v1 (another notesvc, speaches, whisper.cpp\'s server) or https://api.openai.com/v1')
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`NOTESVC_ASR_URL=${raw} is not a URL; set it to the server's base URL, such as http://gpu.internal:8080/v1`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`NOTESVC_ASR_URL=${raw} is not an http(s) URL; set it to the server's base URL, such as http://gpu.internal:8080/v1`)
  return {
    url: raw.replace(/\/+$/, ''),
    key: env.NOTESVC_ASR_KEY || undefined,
    model: env.NOTESVC_ASR_MODEL || 'whisper-1',
    timeoutMs: integer('NOTESVC_ASR_TIMEOUT_SECONDS', env.NOTESVC_ASR_TIMEOUT_SECONDS, 120, 1, 3600) * 1000,
  }
}

/** 16-bit PCM WAV of 16 kHz mono samples: what every OpenAI-compatible server reads. */
function wavOf(samples: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(44 + samples.length * 2)
  const v = new DataView(out.buffer)
  const text = (at: number, s: string) => { for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i) }
  text(0, 'RIFF'); v.setUint32(4, 36 + samples.length * 2, true); text(8, 'WAVEfmt ')
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true)
  v.setUint32(24, SAMPLE_RATE, true); v.setUint32(28, SAMPLE_RATE * 2, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true)
  text(36, 'data'); v.setUint32(40, samples.length * 2, true)
  for (let i = 0; i < samples.length; i++) v.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), true)
  return out
}

let languageNames: Map<string, string> | undefined
/** An ISO 639-1 code from what the server says: a code already (notesvc), or an English name (OpenAI's "english"). */
function isoLanguage(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const v = value.trim().toLowerCase()
  if (/^[a-z]{2}$/.test(v)) return v
  if (!languageNames) {
    const names = new Intl.DisplayNames(['en'], { type: 'language' })
    languageNames = new Map()
    for (let a = 97; a <= 122; a++) for (let b = 97; b <= 122; b++) {
      const code = String.fromCharCode(a, b)
      const name = names.of(code)
      if (name && name !== code) languageNames.set(name.toLowerCase(), code)
    }
  }
  return languageNames.get(v) ?? null
}

interface VerboseSegment { start: number; end: number; text: string; avg_logprob?: number; temperature?: number }
interface VerboseAnswer { text?: string; language?: string; duration?: number; segments?: VerboseSegment[]; words?: (TimedWord & { probability?: number })[] }

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x)
const round = (x: number) => Math.round(x * 1000) / 1000

/** OpenAI's verbose_json as segments of the chunk, each with the words said in it; null when it is not that shape. */
function chunkOf(answer: unknown, seconds: number): ChunkTranscription | null {
  const a = answer as VerboseAnswer
  if (typeof a !== 'object' || a === null || (a.segments !== undefined && !Array.isArray(a.segments)) || (a.words !== undefined && !Array.isArray(a.words))) return null
  const raw = a.segments ?? (typeof a.text === 'string' && a.text.trim() ? [{ start: 0, end: finite(a.duration) ? a.duration : seconds, text: a.text }] : [])
  if (!raw.every(s => typeof s === 'object' && s !== null && finite(s.start) && finite(s.end) && typeof s.text === 'string')) return null
  const words = (a.words ?? []).filter(w => typeof w?.word === 'string' && finite(w.start) && finite(w.end))
  const at = (x: number) => round(Math.min(Math.max(x, 0), seconds))
  const segments: TranscriptSegment[] = raw.map(s => ({
    start: at(s.start), end: at(Math.max(s.start, s.end)), text: s.text.trim(),
    ...(finite(s.avg_logprob) ? { avgLogprob: s.avg_logprob } : {}),
    ...(finite(s.temperature) ? { temperature: s.temperature } : {}),
  }))
  // each word to the segment its middle falls in (or the last one before it)
  for (const w of words) {
    const middle = (w.start + w.end) / 2
    let i = segments.findIndex(s => middle <= s.end)
    if (i < 0) i = segments.length - 1
    if (i < 0) break
    // `probability`, when the server sends it (faster-whisper, speaches): the word's confidence
    const sure = finite(w.probability) && w.probability >= 0 && w.probability <= 1 ? { confidence: w.probability } : {}
    ;(segments[i]!.words ??= []).push({ word: w.word.trim(), start: at(w.start), end: at(Math.max(w.start, w.end)), ...sure })
  }
  return { segments: segments.filter(s => s.text), language: isoLanguage(a.language) }
}

/** A try that did not give a transcript: whether trying again may help, and what to tell. */
interface Failure {
  again: boolean
  /** the server answered (a status), as opposed to no connection or no answer in time */
  answered: boolean
  problem: string
  fix: string
  waitMs?: number
  /** the server refused word times (a notesvc whose engine has none): ask for segments only */
  noWords?: boolean
}

const AGAIN = 'then send the recording again'
const ONCE_IT_WORKS = 'once it works, send the recording again'

/** What an answer that is not a transcript means; `body` is its text. */
function failureOf(res: Response, body: string, s: RemoteSettings): Failure {
  let said = body.trim()
  try {
    said = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? said
  } catch { /* not JSON: its text */ }
  const status = `${res.status}${said ? `: ${said.slice(0, 300).replace(/\.$/, '')}` : ''}`
  const retryAfter = Number(res.headers.get('retry-after'))
  const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, MAX_WAIT_MS) : undefined
  if (res.status === 400 && /timestamp_granularities/.test(said)) return { again: true, answered: true, problem: `refused word times (${status})`, fix: AGAIN, noWords: true }
  if (res.status === 401 || res.status === 403) {
    return { again: false, answered: true, problem: `refused the key (${status})`, fix: `Set NOTESVC_ASR_KEY on this node to a key it accepts (for another notesvc: an API key with the transcriptions:write scope), ${AGAIN}` }
  }
  if (res.status === 429) return { again: true, answered: true, waitMs, problem: `answered ${status}`, fix: `It limits how often it is called: raise its limit for this node's key (another notesvc: NOTESVC_RATE_LIMITS processing=…), ${AGAIN}` }
  if (res.status === 408 || res.status >= 500) return { again: true, answered: true, waitMs, problem: `answered ${status}`, fix: `See the speech server's log for why; ${ONCE_IT_WORKS}` }
  const where = res.status === 404 ? ` NOTESVC_ASR_URL is the OpenAI base URL, usually ending in /v1 (now ${shown(s.url)}).` : ''
  return { again: false, answered: true, problem: `refused the recording (${status})`, fix: `${where} Check that it is an OpenAI-compatible transcription server and that NOTESVC_ASR_MODEL (${s.model}) is a model it has, ${AGAIN}`.trim() }
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const done = () => { signal?.removeEventListener('abort', stop); resolve() }
    const timer = setTimeout(done, ms)
    const stop = () => { clearTimeout(timer); reject(signal!.reason) }
    signal?.addEventListener('abort', stop, { once: true })
  })
}

/** GET {url}/models: whether the server answers and takes the key (doctor, and health in the background). */
async function probe(s: RemoteSettings): Promise<{ reachable: boolean; status?: number; problem?: string }> {
  try {
    const res = await fetch(`${s.url}/models`, { headers: s.key ? { authorization: `Bearer ${s.key}` } : {}, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
    await res.body?.cancel()
    if (res.status === 401 || res.status === 403) return { reachable: true, status: res.status, problem: `it refused the key (${res.status}): set NOTESVC_ASR_KEY to a key it accepts` }
    return { reachable: true, status: res.status }
  } catch (err) {
    return { reachable: false, problem: `it cannot be reached (${(err as Error).message})` }
  }
}

function createRemoteEngine(s: RemoteSettings): AsrEngine {
  const url = shown(s.url)
  const headers: Record<string, string> = s.key ? { authorization: `Bearer ${s.key}` } : {}
  let words = true
  let status: SpeechServerStatus = { url, reachable: null }
  let checking: Promise<void> | null = null
  const note = (reachable: boolean, problem?: string) => { status = { url, reachable, checkedAt: new Date().toISOString(), ...(problem ? { problem } : {}) } }

  /** One try: the transcript, or why not. */
  async function send(wav: Uint8Array<ArrayBuffer>, o: TranscribeOptions, withWords: boolean, seconds: number): Promise<ChunkTranscription | Failure> {
    const form = new FormData()
    form.append('file', new Blob([wav], { type: 'audio/wav' }), 'chunk.wav')
    form.append('model', s.model)
    form.append('response_format', 'verbose_json')
    if (withWords) for (const g of ['word', 'segment']) form.append('timestamp_granularities[]', g)
    if (o.language && !o.translate) form.append('language', o.language)
    if (o.prompt) form.append('prompt', o.prompt)
    // decoded again after a repetition loop: sampled, as whisper.cpp does then
    if (o.fallback) form.append('temperature', '0.4')
    const timeout = AbortSignal.timeout(s.timeoutMs)
    try {
      const res = await fetch(`${s.url}/audio/${o.translate ? 'translations' : 'transcriptions'}`, { method: 'POST', headers, body: form, signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout })
      const body = await res.text()
      if (!res.ok) return failureOf(res, body, s)
      let parsed: unknown
      try {
        parsed = JSON.parse(body)
      } catch {
        parsed = null
      }
      return chunkOf(parsed, seconds) ?? { again: false, answered: true, problem: `answered with something that is not OpenAI's verbose_json (${body.slice(0, 200)})`, fix: `Check that NOTESVC_ASR_URL names an OpenAI-compatible transcription server, ${AGAIN}` }
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason ?? err
      if (timeout.aborted) return { again: true, answered: false, problem: `did not answer within ${s.timeoutMs / 1000} s`, fix: `It may be overloaded: give it fewer callers or raise NOTESVC_ASR_TIMEOUT_SECONDS on this node, ${AGAIN}` }
      const code = (err as { code?: string }).code
      return { again: true, answered: false, problem: `could not be reached (${code ?? (err as Error).message})`, fix: `Check that it runs and that this machine can reach it (NOTESVC_ASR_URL), ${AGAIN}` }
    }
  }

  return {
    name: 'remote',
    get wordTimes() { return words },
    translates: true,
    englishOnly: () => false,
    async ready() {},

    async transcribeChunk(samples: Float32Array, o: TranscribeOptions): Promise<ChunkTranscription> {
      const wav = wavOf(samples)
      const seconds = samples.length / SAMPLE_RATE
      for (let attempt = 1; ; attempt++) {
        o.signal?.throwIfAborted()
        const r = await send(wav, o, words && !o.translate, seconds)
        if (!('again' in r)) {
          note(true)
          return r
        }
        if (r.noWords && words) {
          words = false
          attempt--
          continue
        }
        note(r.answered, r.problem)
        if (!r.again || attempt >= ATTEMPTS) {
          const tries = attempt > 1 ? ` (${attempt} tries for one part of the recording)` : ''
          throw new AsrUnavailableError(`The speech server ${url} ${r.problem}${tries}. ${r.fix}.`)
        }
        await pause(Math.max(r.waitMs ?? 0, BACKOFF_MS[attempt - 1] ?? BACKOFF_MS.at(-1)!), o.signal)
      }
    },

    server() {
      const last = status.checkedAt ? Date.parse(status.checkedAt) : 0
      if (!checking && Date.now() - last > RECHECK_MS) {
        checking = probe(s).then(p => note(p.reachable, p.problem)).finally(() => { checking = null })
      }
      return status
    },
  }
}

/** doctor's line on the server, when NOTESVC_ASR=remote. */
async function serverCheck(s: RemoteSettings): Promise<DoctorCheck> {
  const p = await probe(s)
  const url = shown(s.url)
  if (!p.reachable) return { name: 'speech server', ok: false, detail: `${url}: ${p.problem}`, fix: 'start the speech server, or set NOTESVC_ASR_URL to where it listens' }
  if (p.problem) return { name: 'speech server', ok: false, detail: `${url}: ${p.problem}`, fix: 'set NOTESVC_ASR_KEY (for another notesvc: an API key with the transcriptions:write scope)' }
  if (p.status === 404) return { name: 'speech server', ok: true, warn: true, detail: `${url} answers, but not GET /models (404)`, fix: 'NOTESVC_ASR_URL is the OpenAI base URL, usually ending in /v1' }
  return { name: 'speech server', ok: true, detail: `${url} answers (GET /models: ${p.status}), model ${s.model}, ${s.timeoutMs / 1000} s a chunk at most` }
}

export const remoteAdapter: SpeechEngineAdapter<RemoteSettings | null> = {
  name: 'remote',
  variables: ['NOTESVC_ASR_URL', 'NOTESVC_ASR_KEY', 'NOTESVC_ASR_MODEL', 'NOTESVC_ASR_TIMEOUT_SECONDS'],
  auto: false,
  settings: remoteSettings,
  label: (_ctx, s) => `remote, ${s ? `${shown(s.url)}, model ${s.model}` : 'NOTESVC_ASR_URL not set'}`,
  availability: (_ctx, s) => s
    ? { ok: true, detail: `remote, ${shown(s.url)}` }
    : { ok: false, missing: 'NOTESVC_ASR_URL is not set', install: '`NOTESVC_ASR=remote NOTESVC_ASR_URL=…`', lacks: 'no speech server configured', remedy: 'set NOTESVC_ASR=remote and NOTESVC_ASR_URL' },
  create(_ctx, s) {
    if (!s) throw new AsrUnavailableError('NOTESVC_ASR=remote needs NOTESVC_ASR_URL')
    return createRemoteEngine(s)
  },
  models: (_ctx, s, inUse) => (inUse && s && s.model !== 'whisper-1' ? [{ id: s.model }] : []),
  doctor: async (_ctx, s, chosen) => (chosen && s ? [await serverCheck(s)] : []),
}
