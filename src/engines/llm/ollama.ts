import type { Ollama } from 'ollama'
import type { ChatResponse, Message, Options } from 'ollama'
import type { AnswerInput, AnswerOutput, LlmEngine, Passage, StyleId, SummaryInput, SummaryOutput } from './engine'
import { LlmRefusalError, LlmUnavailableError } from './engine'
import { silentLogger, type Logger } from '../../log'
import { answerSystemPrompt, answerUserMessage, clean, parseModelReply, summarySystemPrompt } from './ollama-prompts'
import { STYLE_REPLIES } from './ollama-replies'
import {
  ANSWER_SCHEMA, STYLE_SCHEMAS,
  type JsonSchema, type ModelAnswer,
} from './style-schemas'

/**
 * The `ollama` LLM adapter: summaries and answers from a model served by Ollama, through the
 * official `ollama` client. Summaries use Ollama's structured outputs (`format` = the style's JSON
 * schema, see style-schemas.ts); the reply is validated again before it becomes structuredContent
 * (prompts and the reading of replies: ollama-prompts.ts).
 *
 * Failures become LlmUnavailableError (502 upstream_failure) with a message that says what to do,
 * and a refusal by the model becomes LlmRefusalError (422 content_policy).
 */
export interface OllamaEngineOptions {
  /** e.g. http://127.0.0.1:11434 (config.ollamaHost) */
  host: string
  /** e.g. llama3.2 (config.ollamaModel) */
  model: string
  /** how long one request to Ollama may take (loading the model included); default 300 s */
  timeoutMs?: number
  /** further tries after a transient failure (not reachable, 5xx, timeout); default 2 */
  retries?: number
  /** the first wait before a retry, doubled each time; default 500 ms */
  backoffMs?: number
  /** the largest context window (tokens) to ask Ollama for, whatever the model could take; default 16384 */
  maxContextTokens?: number
  /** how long probe() waits for /api/tags; default 1500 ms */
  probeTimeoutMs?: number
  fetch?: typeof fetch
  log?: Logger
}

interface OllamaProbe {
  /** Ollama answered /api/tags */
  ok: boolean
  /** the models it has, as it names them (`llama3.2:latest`) */
  models: string[]
  /** the configured model is among them */
  hasModel: boolean
  /** why it did not answer, in words a user can act on */
  error?: string
}

interface OllamaModelInfo {
  /** the model's own context length from /api/show, or null when it does not say */
  modelContextLength: number | null
  /** the window notesvc asks Ollama for (`num_ctx`) */
  contextTokens: number
  maxInputChars: number
}

export interface OllamaEngine extends LlmEngine {
  readonly host: string
  readonly model: string
  /** Quick check (≤ probeTimeoutMs): does Ollama answer, which models does it have. Never throws. */
  probe(): Promise<OllamaProbe>
  /**
   * Asks Ollama about the model (/api/show) and sets maxInputChars from its context window. Throws
   * LlmUnavailableError when Ollama is not reachable or the model is not pulled. summarize() and
   * answer() call it themselves; call it first when you need maxInputChars before the first call.
   */
  ready(signal?: AbortSignal): Promise<OllamaModelInfo>
}

/** Tokens assumed when the model does not report its context length. */
const DEFAULT_CONTEXT_TOKENS = 8192
/** Characters per token, a fair average for English prose. */
const CHARS_PER_TOKEN = 4
/** Room kept for the system prompt and the message framing. */
const PROMPT_TOKENS = 512

/** How much of a context window the answer may use: a quarter, between 512 and 2048 tokens. */
function outputTokensFor(contextTokens: number): number {
  return Math.min(2048, Math.max(512, Math.floor(contextTokens / 4)))
}

/** How many characters of input fit in a window, leaving room for the prompt and the answer. */
export function maxInputCharsFor(contextTokens: number): number {
  const inputTokens = Math.max(256, contextTokens - PROMPT_TOKENS - outputTokensFor(contextTokens))
  return inputTokens * CHARS_PER_TOKEN
}

/** `llama3.2` and `llama3.2:latest` are the same model to Ollama. */
export function sameModel(a: string, b: string): boolean {
  const norm = (name: string) => {
    const n = name.trim().toLowerCase()
    const last = n.slice(n.lastIndexOf('/') + 1)
    return last.includes(':') ? n : `${n}:latest`
  }
  return norm(a) === norm(b)
}

/** Cut `text` to at most `max` characters, at a sentence or word boundary when one is near. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text
  const slice = text.slice(0, max)
  const sentence = Math.max(slice.lastIndexOf('. '), slice.lastIndexOf('? '), slice.lastIndexOf('! '), slice.lastIndexOf('\n'))
  if (sentence > max * 0.8) return slice.slice(0, sentence + 1)
  const space = slice.lastIndexOf(' ')
  return space > max * 0.8 ? slice.slice(0, space) : slice
}

type Failure = { transient: boolean; message: string }

function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown }
  const code = typeof e?.code === 'string' ? e.code : ''
  const message = typeof e?.message === 'string' ? e.message : ''
  if (/^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|ConnectionRefused|ConnectionClosed|FailedToOpenSocket|UND_ERR_SOCKET)$/.test(code)) return true
  if (/Unable to connect|fetch failed|socket connection was closed|ECONNREFUSED|ECONNRESET|network/i.test(message)) return true
  return e?.cause !== undefined && e.cause !== err && isConnectionError(e.cause)
}

/** The passages that go to the model, best first, as many as fit the window (`limit` characters). */
function passagesThatFit(input: AnswerInput, limit: number): Passage[] {
  let budget = limit - input.question.length - 200
  const passages: Passage[] = []
  for (const p of input.passages) {
    const room = budget - 10
    if (room <= 0) break
    const text = p.text.length > room ? cut(p.text, room) : p.text
    if (!text.trim()) continue
    passages.push({ ...p, text })
    budget -= text.length + 10
  }
  return passages
}

/** What the caller of Ollama needs: where, which model, and how long and how often to try. */
interface OllamaCallerOptions {
  host: string
  model: string
  timeoutMs: number
  retries: number
  backoffMs: number
  fetch: typeof fetch
  log: Logger
}

/**
 * Calls to Ollama through the `ollama` client: each try with a timeout, transient failures (not
 * reachable, 5xx, timeout) retried with backoff, every failure in the end an LlmUnavailableError that
 * says what to do.
 */
export function createOllamaCaller({ host, model, timeoutMs, retries, backoffMs, fetch: baseFetch, log }: OllamaCallerOptions) {
  let ollamaPackage: Promise<typeof import('ollama')> | undefined

  /**
   * A client whose every request carries `signal` (the client itself passes none for non-streamed
   * calls). The `ollama` package is loaded with the first call, not at start-up.
   */
  async function clientWith(signal: AbortSignal): Promise<Ollama> {
    const { Ollama } = await (ollamaPackage ??= import('ollama'))
    const f = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      baseFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal })) as typeof fetch
    return new Ollama({ host, fetch: f })
  }

  const notReachable = `Ollama is not reachable at ${host}; start it with \`ollama serve\` or set OLLAMA_HOST to where it runs`
  const notPulled = `Ollama at ${host} does not have the model "${model}"; pull it with \`ollama pull ${model}\` or set NOTESVC_OLLAMA_MODEL to a model it has`

  function classify(err: unknown, timedOut: boolean, limitMs: number): Failure {
    const e = err as { name?: unknown; status_code?: unknown; error?: unknown; message?: unknown }
    if (timedOut || e?.name === 'TimeoutError') {
      return {
        transient: true,
        message: `Ollama at ${host} did not answer within ${Math.round(limitMs / 100) / 10} s (model ${model}); ` +
          'it may still be loading the model or the machine is too slow for it; try again or use a smaller model',
      }
    }
    if (e?.name === 'ResponseError' && typeof e.status_code === 'number') {
      const status = e.status_code
      const said = String(e.error ?? e.message ?? '').slice(0, 300)
      if (status === 404 && /\bmodel\b.*not found/i.test(said)) return { transient: false, message: notPulled }
      if (status === 404) return { transient: false, message: `${host} answered 404 (${said}); check that OLLAMA_HOST points at Ollama` }
      if (status >= 500 || status === 429) return { transient: true, message: `Ollama at ${host} failed (${status}): ${said}` }
      return { transient: false, message: `Ollama at ${host} rejected the request (${status}): ${said}` }
    }
    if (isConnectionError(err)) return { transient: true, message: notReachable }
    if (err instanceof SyntaxError) {
      return { transient: false, message: `${host} answered with something that is not Ollama's JSON; check that OLLAMA_HOST points at Ollama` }
    }
    const message = err instanceof Error ? err.message : String(err)
    return { transient: true, message: `Ollama at ${host} failed: ${message.slice(0, 300)}` }
  }

  function sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
      const onAbort = () => { clearTimeout(timer); reject(signal!.reason) }
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** One operation against Ollama with a timeout per try and retries with backoff on transient failures. */
  async function call<T>(what: string, fn: (client: Ollama) => Promise<T>, signal?: AbortSignal, limitMs = timeoutMs, maxRetries = retries): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw signal.reason
      const timeout = AbortSignal.timeout(limitMs)
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
      try {
        return await fn(await clientWith(combined))
      } catch (err) {
        if (signal?.aborted) throw signal.reason
        const failure = classify(err, timeout.aborted, limitMs)
        if (!failure.transient || attempt >= maxRetries) {
          const tries = attempt + 1
          throw new LlmUnavailableError(failure.transient && tries > 1 ? `${failure.message} (tried ${tries} times)` : failure.message)
        }
        const wait = backoffMs * 2 ** attempt
        log.warn('ollama request failed; retrying', { what, attempt: attempt + 1, retryInMs: wait, reason: failure.message })
        await sleep(wait, signal)
      }
    }
  }

  return call
}

export function createOllamaEngine(opts: OllamaEngineOptions): OllamaEngine {
  const host = opts.host.replace(/\/+$/, '')
  const model = opts.model
  const timeoutMs = opts.timeoutMs ?? 300_000
  const retries = Math.max(0, opts.retries ?? 2)
  const backoffMs = opts.backoffMs ?? 500
  const maxContextTokens = opts.maxContextTokens ?? 16_384
  const probeTimeoutMs = Math.min(opts.probeTimeoutMs ?? 1500, 1500)
  const baseFetch = opts.fetch ?? fetch
  const log = opts.log ?? silentLogger

  let info: OllamaModelInfo | undefined
  let maxInputChars = maxInputCharsFor(Math.min(DEFAULT_CONTEXT_TOKENS, maxContextTokens))
  const call = createOllamaCaller({ host, model, timeoutMs, retries, backoffMs, fetch: baseFetch, log })

  let loading: Promise<OllamaModelInfo> | undefined

  /** One /api/show at a time; a failure is not remembered, so the next call asks again. */
  function ready(signal?: AbortSignal): Promise<OllamaModelInfo> {
    if (info) return Promise.resolve(info)
    if (!signal) return (loading ??= loadInfo().finally(() => { loading = undefined }))
    return loadInfo(signal)
  }

  async function loadInfo(signal?: AbortSignal): Promise<OllamaModelInfo> {
    const shown = await call('show', c => c.show({ model }), signal, Math.min(timeoutMs, 15_000))
    const modelInfo = (shown.model_info ?? {}) as unknown as Record<string, unknown>
    const arch = typeof modelInfo['general.architecture'] === 'string' ? modelInfo['general.architecture'] : undefined
    let length: unknown = arch ? modelInfo[`${arch}.context_length`] : undefined
    if (typeof length !== 'number') length = Object.entries(modelInfo).find(([k, v]) => k.endsWith('.context_length') && typeof v === 'number')?.[1]
    const modelContextLength = typeof length === 'number' && length > 0 ? Math.floor(length) : null
    const contextTokens = Math.min(modelContextLength ?? DEFAULT_CONTEXT_TOKENS, maxContextTokens)
    info = { modelContextLength, contextTokens, maxInputChars: maxInputCharsFor(contextTokens) }
    maxInputChars = info.maxInputChars
    log.debug('ollama model ready', { host, model, ...info })
    return info
  }

  /** Asks for structured output, validates it; a malformed reply is asked for once more. */
  async function structured<T>(what: string, messages: Message[], schema: JsonSchema, textFields: string[], signal?: AbortSignal): Promise<T> {
    const { contextTokens } = await ready(signal)
    const options: Partial<Options> = { num_ctx: contextTokens, num_predict: outputTokensFor(contextTokens), temperature: 0.2 }
    let problem = ''
    for (let attempt = 1; attempt <= 2; attempt++) {
      const res: ChatResponse = await call(what, c => c.chat({ model, messages, format: schema, stream: false, options }), signal)
      const parsed = parseModelReply<T>(res?.message?.content, schema, textFields)
      if (parsed.ok) return parsed.value
      if (parsed.refusal) throw new LlmRefusalError(`The model ${model} declined to process this text: ${parsed.text}`)
      problem = parsed.problem + (res?.done_reason === 'length' ? ' (the model stopped at its output limit)' : '')
      log.warn('ollama returned malformed output', { what, attempt, problem })
    }
    throw new LlmUnavailableError(`The model ${model} at ${host} returned malformed output twice: ${problem}; try again or set NOTESVC_OLLAMA_MODEL to another model`)
  }

  async function summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
    const styleId: StyleId = input.styleId in STYLE_SCHEMAS ? input.styleId : 'note'
    const { maxInputChars: limit } = await ready(signal)
    let text = input.text
    if (text.length > limit) {
      // The transcript style only needs a title, so its head is enough; other styles should have
      // been split by the caller (map-reduce), so say so in the log before cutting.
      if (styleId !== 'transcript') log.warn('text longer than the model window; cutting it', { chars: text.length, maxInputChars: limit })
      text = cut(text, limit)
    }
    const messages: Message[] = [
      { role: 'system', content: summarySystemPrompt(styleId, input.language) },
      { role: 'user', content: text },
    ]
    const style = STYLE_REPLIES[styleId]
    // the reply is checked against the style's schema, so it has the style's type (`never` stands for each)
    return style.shape(await structured<never>('summarize', messages, STYLE_SCHEMAS[styleId], style.textFields, signal), input)
  }

  async function answer(input: AnswerInput, signal?: AbortSignal): Promise<AnswerOutput> {
    const { maxInputChars: limit } = await ready(signal)
    const passages = passagesThatFit(input, limit)
    if (!passages.length) return { answer: 'The transcript does not contain anything that answers this question.' }
    const messages: Message[] = [
      { role: 'system', content: answerSystemPrompt(input.language) },
      { role: 'user', content: answerUserMessage(input.question, passages) },
    ]
    const r = await structured<ModelAnswer>('answer', messages, ANSWER_SCHEMA, ['answer'], signal)
    // found=false: the model says in its own words that the passages do not answer it
    return { answer: clean(r.answer) || 'The transcript does not say.' }
  }

  async function probe(): Promise<OllamaProbe> {
    try {
      const listed = await call('probe', c => c.list(), undefined, probeTimeoutMs, 0)
      const models = (listed.models ?? []).map(m => m.name ?? m.model).filter((n): n is string => typeof n === 'string')
      return { ok: true, models, hasModel: models.some(n => sameModel(n, model)) }
    } catch (err) {
      return { ok: false, models: [], hasModel: false, error: err instanceof Error ? err.message : String(err) }
    }
  }

  return {
    name: 'ollama',
    host,
    model,
    get maxInputChars() {
      return maxInputChars
    },
    summarize,
    answer,
    probe,
    ready,
  }
}
