/**
 * A stand-in for an Ollama server, for tests on machines where Ollama cannot run. It listens on
 * loopback (a free port) and speaks Ollama's HTTP API as docs/api.md of ollama/ollama describes it,
 * so the real `ollama` npm client works against it:
 *
 * - `GET /` → "Ollama is running"; `GET /api/version`
 * - `GET /api/tags` → `{"models":[{name, model, modified_at, size, digest, details}]}`
 * - `POST /api/show` → `{modelfile, parameters, template, details, model_info, capabilities, modified_at}`
 *   with `model_info["<arch>.context_length"]`; unknown model → 404 `{"error":"model 'x' not found"}`
 * - `POST /api/embed` → `{model, embeddings}`: one unit vector per input, by `embed` when given, else
 *   the input's lower-cased words hashed into 64 dimensions (texts sharing words point alike)
 * - `POST /api/chat` and `POST /api/generate`, streamed (NDJSON, `application/x-ndjson`, the default
 *   as in Ollama) or not (`"stream": false`), honouring `format`: a JSON schema gives a JSON string
 *   that conforms to it, `"json"` gives a JSON object, none gives prose. The content is deterministic
 *   and taken from the input (its sentences, names and days), so it is plausible without a model.
 *   Unknown model → 404 `{"error":"model \"x\" not found, try pulling it first"}` (what Ollama says
 *   today; `notFoundQuotes: 'single'` gives the older `model 'x' not found, …`).
 *
 * Failure switches (see FakeOllamaBehaviour): down (not listening), slow, model missing, 500 for
 * the next N generations, malformed output (invalid JSON or the wrong shape), refusal. Every request
 * is recorded so tests can check what was sent.
 */

interface FakeOllamaBehaviour {
  /** wait this long before answering (every endpoint) */
  delayMs?: number
  /** only the next N requests are delayed; unset: all of them */
  delayTimes?: number
  /** answer the next N chat/generate requests with 500 and Ollama's error body */
  fail500Times?: number
  /** the model's output, instead of conforming JSON */
  malformed?: 'invalid-json' | 'wrong-shape'
  /** only the next N chat/generate replies are malformed; unset: all of them */
  malformedTimes?: number
  /** the model refuses: `json` sets `refused: true` in the schema's reply, `text` answers with an apology in prose */
  refusal?: 'json' | 'text'
  /** the quotes around the name in the "not found, try pulling it first" message */
  notFoundQuotes?: 'double' | 'single'
}

export interface FakeOllamaOptions {
  /** the models it has; default `["llama3.2:latest"]` */
  models?: string[]
  /** model_info `<arch>.context_length`; null leaves it out; default 131072 (llama3.2) */
  contextLength?: number | null
  behaviour?: FakeOllamaBehaviour
  /** the embedding `POST /api/embed` gives a text (before it is made unit length) */
  embed?: (text: string) => number[]
}

interface RecordedRequest {
  method: string
  path: string
  /** the JSON body, parsed; null when there was none */
  body: any
}

export interface FakeOllama {
  /** http://127.0.0.1:<port> (what OLLAMA_HOST would be) */
  readonly host: string
  readonly port: number
  readonly requests: RecordedRequest[]
  models: string[]
  contextLength: number | null
  behaviour: FakeOllamaBehaviour
  /** the recorded requests to one path, e.g. `/api/chat` */
  requestsTo(path: string): RecordedRequest[]
  /** stop listening (connections are refused), and listen again on the same port */
  down(): void
  up(): void
  readonly isUp: boolean
  stop(): void
}

const NAMES_STOP = new Set([
  'The', 'A', 'An', 'And', 'But', 'So', 'We', 'I', 'It', 'They', 'He', 'She', 'You', 'This', 'That', 'These', 'Those',
  'In', 'On', 'At', 'For', 'If', 'When', 'Then', 'Our', 'My', 'Its', 'Their', 'There', 'Here', 'What', 'Who', 'Why',
  'How', 'Question', 'Passages', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday',
  'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December',
  'OK', 'Okay', 'Yes', 'No', 'Also', 'Let', 'Please', 'Thanks', 'Good', 'Great', 'Next', 'Everyone', 'All',
])
const DUE = /\b(?:by |before |on |until )?(?:(?:next |this )?(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|week|month)|tomorrow|today|end of (?:the )?(?:day|week|month)|(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}(?:st|nd|rd|th)?)\b/i

function sentencesOf(text: string): string[] {
  return text.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/).map(s => s.trim()).filter(Boolean)
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9']+/g) ?? []
}

/** What the "model" reads: the last user message, split into the question (if any) and the material. */
function readInput(text: string): { sentences: string[]; question: string | null; names: string[] } {
  const q = /\n\s*Question:\s*([\s\S]*)$/.exec(text)
  const question = q ? q[1]!.trim() : null
  const material = (q ? text.slice(0, q.index) : text)
    .replace(/^\s*Passages from the transcript:\s*/i, '')
    .replace(/^\s*\[\d+\]\s*/gm, '')
  const sentences = sentencesOf(material)
  const names: string[] = []
  for (const s of sentences) {
    const words = s.split(/\s+/)
    words.forEach((w, i) => {
      const name = w.replace(/[^A-Za-z'-]/g, '').replace(/'s$/, '')
      if (/^[A-Z][a-z]+$/.test(name) && !NAMES_STOP.has(name) && !names.includes(name) && (i > 0 || /^(?:will|said|asked|agreed|opened|raised|thinks|wants|has|is|was|and)$/i.test(words[1] ?? ''))) names.push(name)
    })
  }
  return { sentences, question, names }
}

interface Ctx {
  sentences: string[]
  question: string | null
  names: string[]
  next: number
  refuse: boolean
}

function nextSentence(ctx: Ctx): string {
  if (!ctx.sentences.length) return 'Nothing was said.'
  const s = ctx.sentences[ctx.next % ctx.sentences.length]!
  ctx.next++
  return s
}

function bestSentence(ctx: Ctx): { sentence: string; overlap: number } {
  const q = new Set(wordsOf(ctx.question ?? '').filter(w => w.length > 3))
  let best = { sentence: ctx.sentences[0] ?? '', overlap: 0 }
  for (const s of ctx.sentences) {
    const overlap = wordsOf(s).filter(w => q.has(w)).length
    if (overlap > best.overlap) best = { sentence: s, overlap }
  }
  return best
}

function titleOf(ctx: Ctx): string {
  const words = (ctx.sentences[0] ?? 'Untitled').replace(/[.!?]+$/, '').split(' ')
  return words.slice(0, 8).join(' ')
}

/** A value that conforms to `schema`, made from the input. */
function generate(schema: any, key: string, ctx: Ctx, index = 0): unknown {
  if (!schema || typeof schema !== 'object') return null
  if (Array.isArray(schema.anyOf) && schema.anyOf.length) {
    const nonNull = schema.anyOf.find((s: any) => s?.type !== 'null') ?? schema.anyOf[0]
    return generate(nonNull, key, ctx, index)
  }
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0]
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : ['string']
  const nullable = types.includes('null')
  const type = types.find(t => t !== 'null') ?? 'null'
  const k = key.toLowerCase()
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [name, sub] of Object.entries<any>(schema.properties ?? {})) out[name] = generate(sub, name, ctx, index)
      return out
    }
    case 'array': {
      if (ctx.refuse) return []
      if (/attendee|people|participant|names/.test(k)) return ctx.names.slice(0, 4)
      // decisions and action items come from the sentences that read like them
      const pool = /decision/.test(k) ? ctx.sentences.filter(s => /\b(?:decid|agree|approv|chose|settled)/i.test(s))
        : /action|todo|task/.test(k) ? ctx.sentences.filter(s => /\b(?:will|needs? to|has to|should)\b/i.test(s))
        : null
      const sub: Ctx = pool ? { ...ctx, sentences: pool, next: 0 } : ctx
      const count = Math.max(0, Math.min(3, sub.sentences.length))
      return Array.from({ length: count }, (_, i) => generate(schema.items ?? { type: 'string' }, key.replace(/s$/, ''), sub, i))
    }
    case 'boolean':
      if (/refus/.test(k)) return ctx.refuse
      if (/found|answer/.test(k)) return ctx.question === null || bestSentence(ctx).overlap > 0
      return true
    case 'integer':
    case 'number':
      return index
    case 'null':
      return null
    default: {
      if (ctx.refuse) return ''
      if (/title|name$|heading/.test(k) && !/owner/.test(k)) return /heading/.test(k) ? `Part ${index + 1}` : titleOf(ctx)
      if (/owner|assignee|who/.test(k)) {
        const sentence = ctx.sentences[(ctx.next + ctx.sentences.length - 1) % Math.max(1, ctx.sentences.length)] ?? ''
        const name = ctx.names.find(n => sentence.includes(n))
        return name ?? (nullable ? null : ctx.names[0] ?? 'Someone')
      }
      if (/due|date|when|deadline/.test(k)) {
        const sentence = ctx.sentences[(ctx.next + ctx.sentences.length - 1) % Math.max(1, ctx.sentences.length)] ?? ''
        const m = DUE.exec(sentence)
        return m ? m[0] : nullable ? null : 'soon'
      }
      if (/^answer$/.test(k) && ctx.question !== null) {
        const best = bestSentence(ctx)
        return best.overlap > 0 ? best.sentence : 'The transcript does not say.'
      }
      if (/summary|description|overview/.test(k)) return ctx.sentences.slice(0, 2).join(' ') || 'Nothing was said.'
      return nextSentence(ctx)
    }
  }
}

function modelNameMatches(requested: string, have: string): boolean {
  const norm = (n: string) => (n.slice(n.lastIndexOf('/') + 1).includes(':') ? n : `${n}:latest`).toLowerCase()
  return norm(requested) === norm(have)
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8' } })

function digestOf(name: string): string {
  return new Bun.CryptoHasher('sha256').update(name).digest('hex')
}

export function startFakeOllama(opts: FakeOllamaOptions = {}): FakeOllama {
  const requests: RecordedRequest[] = []
  let server: ReturnType<typeof Bun.serve> | null = null
  let port = 0

  const state = {
    models: opts.models ?? ['llama3.2:latest'],
    contextLength: opts.contextLength === undefined ? 131072 : opts.contextLength,
    behaviour: { ...(opts.behaviour ?? {}) } as FakeOllamaBehaviour,
  }

  /** Uses up one of a switch's "next N times"; unset counts mean always. */
  function consume(countKey: 'delayTimes' | 'malformedTimes' | 'fail500Times'): boolean {
    const b = state.behaviour
    const left = b[countKey]
    if (left === undefined) return countKey !== 'fail500Times'
    if (left <= 0) return false
    b[countKey] = left - 1
    return true
  }

  function hasModel(name: unknown): name is string {
    return typeof name === 'string' && state.models.some(m => modelNameMatches(name, m))
  }

  function notFoundPull(name: string) {
    const quoted = state.behaviour.notFoundQuotes === 'single' ? `'${name}'` : JSON.stringify(name)
    return json(404, { error: `model ${quoted} not found, try pulling it first` })
  }

  function content(format: unknown, userText: string): { text: string; doneReason: string } {
    const b = state.behaviour
    if (b.refusal === 'text') return { text: "I'm sorry, but I can't help with that request.", doneReason: 'stop' }
    if (b.malformed && consume('malformedTimes')) {
      if (b.malformed === 'invalid-json') return { text: '{"title": "Weekly sync", "summary": "The team met and', doneReason: 'length' }
      return { text: JSON.stringify({ result: sentencesOf(userText)[0] ?? 'ok', items: 3 }), doneReason: 'stop' }
    }
    const input = readInput(userText)
    const ctx: Ctx = { ...input, next: 0, refuse: b.refusal === 'json' }
    if (format && typeof format === 'object') {
      const value = generate(format, '', ctx)
      if (ctx.refuse && value && typeof value === 'object' && !('refused' in (value as object))) {
        return { text: JSON.stringify({ ...(value as object), ...firstStringField(format, "I'm sorry, but I can't help with that.") }), doneReason: 'stop' }
      }
      return { text: JSON.stringify(value), doneReason: 'stop' }
    }
    if (ctx.refuse) return { text: "I'm sorry, but I can't help with that.", doneReason: 'stop' }
    if (format === 'json') return { text: JSON.stringify({ response: input.sentences.slice(0, 2).join(' ') }), doneReason: 'stop' }
    const answer = input.question !== null ? (bestSentence(ctx).sentence || 'The transcript does not say.') : input.sentences.slice(0, 2).join(' ')
    return { text: answer, doneReason: 'stop' }
  }

  function firstStringField(schema: any, text: string): Record<string, string> {
    const entry = Object.entries<any>(schema?.properties ?? {}).find(([, s]) => s?.type === 'string')
    return entry ? { [entry[0]]: text } : {}
  }

  function stats(promptChars: number, evalChars: number) {
    return {
      total_duration: 1_200_000_000,
      load_duration: 50_000_000,
      prompt_eval_count: Math.ceil(promptChars / 4),
      prompt_eval_duration: 300_000_000,
      eval_count: Math.ceil(evalChars / 4),
      eval_duration: 800_000_000,
    }
  }

  function generation(kind: 'chat' | 'generate', body: any): Response {
    if (!body || typeof body !== 'object') return json(400, { error: 'missing request body' })
    if (!body.model) return json(400, { error: 'model is required' })
    if (!hasModel(body.model)) return notFoundPull(body.model)
    if (consume('fail500Times')) return json(500, { error: 'llama runner process has terminated: signal: killed' })

    let userText = ''
    if (kind === 'chat') {
      const messages: any[] = Array.isArray(body.messages) ? body.messages : []
      if (!messages.length) {
        return json(200, { model: body.model, created_at: new Date().toISOString(), message: { role: 'assistant', content: '' }, done_reason: 'load', done: true })
      }
      userText = String([...messages].reverse().find(m => m?.role === 'user')?.content ?? '')
    } else {
      userText = String(body.prompt ?? '')
      if (!userText) return json(200, { model: body.model, created_at: new Date().toISOString(), response: '', done: true, done_reason: 'load' })
    }
    const promptChars = kind === 'chat' ? (body.messages as any[]).reduce((n, m) => n + String(m?.content ?? '').length, 0) : userText.length
    const { text, doneReason } = content(body.format, userText)
    const created = () => new Date().toISOString()
    const piece = (s: string) => (kind === 'chat' ? { message: { role: 'assistant', content: s } } : { response: s })
    const final = { model: body.model, created_at: created(), ...piece(''), done: true, done_reason: doneReason, ...(kind === 'generate' ? { context: [1, 2, 3] } : {}), ...stats(promptChars, text.length) }

    if (body.stream === false) {
      return json(200, { ...final, ...piece(text) })
    }
    const chunks = text.match(/\S+\s*|\s+/g) ?? []
    const lines = [...chunks.map(c => JSON.stringify({ model: body.model, created_at: created(), ...piece(c), done: false })), JSON.stringify(final)]
    const encoder = new TextEncoder()
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const line = lines.shift()
        if (line === undefined) return controller.close()
        controller.enqueue(encoder.encode(line + '\n'))
        await Bun.sleep(0)
      },
    })
    return new Response(stream, { status: 200, headers: { 'Content-Type': 'application/x-ndjson' } })
  }

  function tags(): Response {
    return json(200, {
      models: state.models.map(name => ({
        name,
        model: name,
        modified_at: '2025-01-15T10:00:00.000000000Z',
        size: 2_019_393_189,
        digest: digestOf(name),
        details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
      })),
    })
  }

  function show(body: any): Response {
    const name = body?.model ?? body?.name
    if (!name) return json(400, { error: 'model is required' })
    if (!hasModel(name)) return json(404, { error: `model '${name}' not found` })
    const modelInfo: Record<string, unknown> = {
      'general.architecture': 'llama',
      'general.file_type': 15,
      'general.parameter_count': 3_212_749_888,
      'general.quantization_version': 2,
      'llama.attention.head_count': 24,
      'llama.attention.head_count_kv': 8,
      'llama.block_count': 28,
      'llama.embedding_length': 3072,
      'llama.vocab_size': 128256,
      'tokenizer.ggml.model': 'gpt2',
    }
    if (state.contextLength !== null) modelInfo['llama.context_length'] = state.contextLength
    return json(200, {
      license: 'LLAMA 3.2 COMMUNITY LICENSE AGREEMENT',
      modelfile: `# Modelfile generated by "ollama show"\nFROM ${name}\n`,
      parameters: 'stop                           "<|start_header_id|>"\nstop                           "<|end_header_id|>"\nstop                           "<|eot_id|>"',
      template: '{{ .Prompt }}',
      details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
      model_info: modelInfo,
      capabilities: ['completion', 'tools'],
      modified_at: '2025-01-15T10:00:00.000000000Z',
    })
  }

  /** words hashed into 64 dimensions: a stand-in with no model that still puts texts of the same words close */
  function wordVector(text: string): number[] {
    const v = new Array<number>(64).fill(0)
    for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) v[Number(BigInt(Bun.hash(w)) % 64n)]! += 1
    return v
  }

  function embed(body: any): Response {
    if (!hasModel(body?.model)) return notFoundPull(String(body?.model))
    const inputs: string[] = Array.isArray(body.input) ? body.input : [String(body.input ?? '')]
    const embeddings = inputs.map(text => {
      const v = (opts.embed ?? wordVector)(text)
      const norm = Math.hypot(...v) || 1
      return v.map(x => x / norm)
    })
    return json(200, { model: body.model, embeddings, total_duration: 1_000_000, load_duration: 100_000, prompt_eval_count: inputs.length })
  }

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname
    let body: any = null
    const raw = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.text()
    if (raw) {
      try {
        body = JSON.parse(raw)
      } catch {
        requests.push({ method: req.method, path, body: raw })
        return json(400, { error: 'invalid character in request body' })
      }
    }
    requests.push({ method: req.method, path, body })

    const b = state.behaviour
    if (b.delayMs && consume('delayTimes')) await Bun.sleep(b.delayMs)

    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/') return new Response('Ollama is running', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } })
    if (req.method === 'GET' && path === '/api/version') return json(200, { version: '0.12.0' })
    if (req.method === 'GET' && path === '/api/tags') return tags()
    if (req.method === 'POST' && path === '/api/show') return show(body)
    if (req.method === 'POST' && path === '/api/embed') return embed(body)
    if (req.method === 'POST' && path === '/api/chat') return generation('chat', body)
    if (req.method === 'POST' && path === '/api/generate') return generation('generate', body)
    return new Response('404 page not found', { status: 404, headers: { 'Content-Type': 'text/plain' } })
  }

  function listen() {
    server = Bun.serve({ hostname: '127.0.0.1', port, fetch: handle })
    port = server.port ?? port
  }
  listen()

  return {
    get host() { return `http://127.0.0.1:${port}` },
    get port() { return port },
    requests,
    get models() { return state.models },
    set models(v) { state.models = v },
    get contextLength() { return state.contextLength },
    set contextLength(v) { state.contextLength = v },
    get behaviour() { return state.behaviour },
    set behaviour(v) { state.behaviour = { ...v } },
    requestsTo: p => requests.filter(r => r.path === p),
    down() {
      server?.stop(true)
      server = null
    },
    up() {
      if (!server) listen()
    },
    get isUp() { return server !== null },
    stop() {
      server?.stop(true)
      server = null
    },
  }
}
