import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Ollama } from 'ollama'
import { LlmRefusalError, LlmUnavailableError, type StyleId } from '../../../src/engines/llm/engine'
import {
  createOllamaEngine, maxInputCharsFor, sameModel, type OllamaEngineOptions,
} from '../../../src/engines/llm/ollama'
import { looksLikeRefusal } from '../../../src/engines/llm/ollama-prompts'
import { ANSWER_SCHEMA, STYLE_SCHEMAS, validateJson } from '../../../src/engines/llm/style-schemas'
import { startFakeOllama, type FakeOllama } from '../../helpers/fake-ollama'

const MEETING = [
  'Maria opened the weekly sync with Tom and Priya.',
  'The team agreed to ship the beta on March third.',
  'Tom will write the migration guide by Friday.',
  'Priya raised concerns about the upload limit.',
  'They decided to keep the upload limit at five gigabytes.',
  'Maria will prepare the release notes before the launch.',
].join(' ')

const SEGMENTS = [
  { start: 0, end: 4.2, text: 'Maria opened the weekly sync with Tom and Priya.' },
  { start: 4.2, end: 9.8, text: 'The team agreed to ship the beta on March third.' },
]

let fake: FakeOllama

beforeAll(() => {
  fake = startFakeOllama()
})
afterAll(() => fake.stop())
afterEach(() => {
  fake.up()
  fake.behaviour = {}
  fake.models = ['llama3.2:latest']
  fake.contextLength = 131072
  fake.requests.length = 0
})

function engine(o: Partial<OllamaEngineOptions> = {}) {
  return createOllamaEngine({ host: fake.host, model: 'llama3.2', backoffMs: 1, timeoutMs: 5000, ...o })
}

const chats = () => fake.requestsTo('/api/chat')
const lastChat = () => chats().at(-1)!.body

/** The shapes of DECISIONS.md "Structured content (keyed by style)", checked independently of the adapter's schemas. */
function expectDecisionsShape(styleId: StyleId, sc: Record<string, unknown>) {
  expect(Object.keys(sc)).toEqual([styleId])
  const v = sc[styleId] as any
  const isStrings = (a: unknown) => Array.isArray(a) && a.every(x => typeof x === 'string')
  switch (styleId) {
    case 'note':
      expect(Object.keys(v).sort()).toEqual(['sections', 'summary'])
      expect(typeof v.summary).toBe('string')
      expect(Array.isArray(v.sections)).toBe(true)
      for (const s of v.sections) {
        expect(Object.keys(s).sort()).toEqual(['heading', 'points'])
        expect(typeof s.heading).toBe('string')
        expect(isStrings(s.points)).toBe(true)
      }
      break
    case 'bulletpoints':
      expect(Object.keys(v)).toEqual(['bullets'])
      expect(isStrings(v.bullets)).toBe(true)
      break
    case 'meeting-notes':
      expect(Object.keys(v).sort()).toEqual(['actionItems', 'attendees', 'decisions', 'summary'])
      expect(typeof v.summary).toBe('string')
      expect(isStrings(v.attendees)).toBe(true)
      expect(isStrings(v.decisions)).toBe(true)
      for (const a of v.actionItems) {
        expect(Object.keys(a).sort()).toEqual(['due', 'owner', 'task'])
        expect(typeof a.task).toBe('string')
        expect(a.owner === null || typeof a.owner === 'string').toBe(true)
        expect(a.due === null || typeof a.due === 'string').toBe(true)
      }
      break
    case 'transcript':
      expect(Object.keys(v)).toEqual(['segments'])
      for (const s of v.segments) {
        expect(Object.keys(s).sort()).toEqual(['end', 'start', 'text'])
        expect(typeof s.start).toBe('number')
        expect(typeof s.end).toBe('number')
        expect(typeof s.text).toBe('string')
      }
      break
  }
}

describe('summaries', () => {
  for (const styleId of ['note', 'bulletpoints', 'meeting-notes', 'transcript'] as const) {
    test(`${styleId}: structured content in the DECISIONS.md shape, request with the style's schema`, async () => {
      const out = await engine().summarize({ text: MEETING, styleId, segments: SEGMENTS, language: 'en' })
      expect(out.title.length).toBeGreaterThan(0)
      expect(out.title.length).toBeLessThanOrEqual(120)
      expect(out.summary.length).toBeGreaterThan(0)
      expectDecisionsShape(styleId, out.structuredContent)

      const body = lastChat()
      expect(body.model).toBe('llama3.2')
      expect(body.stream).toBe(false)
      expect(body.format).toEqual(STYLE_SCHEMAS[styleId])
      expect(body.messages).toHaveLength(2)
      expect(body.messages[0].role).toBe('system')
      expect(body.messages[0].content).toContain('"en"')
      expect(body.messages[1]).toEqual({ role: 'user', content: MEETING })
      expect(body.options.num_ctx).toBe(16384)
      expect(body.options.num_predict).toBeGreaterThan(0)
    })
  }

  test('meeting notes carry what the text says: attendees, decisions, owners and due dates', async () => {
    const out = await engine().summarize({ text: MEETING, styleId: 'meeting-notes' })
    const m = out.structuredContent['meeting-notes'] as any
    expect(m.attendees).toEqual(expect.arrayContaining(['Maria', 'Tom', 'Priya']))
    expect(m.decisions).toContain('The team agreed to ship the beta on March third.')
    expect(m.actionItems).toContainEqual({ task: 'Tom will write the migration guide by Friday.', owner: 'Tom', due: 'by Friday' })
  })

  test('transcript: the segments are the input segments, the model writes only the title', async () => {
    const out = await engine().summarize({ text: MEETING, styleId: 'transcript', segments: SEGMENTS })
    expect(out.structuredContent).toEqual({ transcript: { segments: SEGMENTS } })
    expect(out.summary).toBe(MEETING)
    expect(Object.keys(lastChat().format.properties).sort()).toEqual(['refused', 'title'])
  })

  test('transcript without segments gives an empty segment list', async () => {
    const out = await engine().summarize({ text: MEETING, styleId: 'transcript' })
    expect(out.structuredContent).toEqual({ transcript: { segments: [] } })
  })

  test('a text longer than the window is cut before it is sent', async () => {
    fake.contextLength = 4096
    const e = engine()
    const long = Array.from({ length: 3000 }, (_, i) => `Sentence number ${i} is here.`).join(' ')
    const out = await e.summarize({ text: long, styleId: 'transcript' })
    expect(out.summary).toBe(long)
    const sent = lastChat().messages[1].content as string
    expect(sent.length).toBeLessThanOrEqual(e.maxInputChars)
    expect(long.startsWith(sent)).toBe(true)
  })

  test('the schemas are plain JSON Schema objects that Ollama accepts as `format`', () => {
    for (const schema of [...Object.values(STYLE_SCHEMAS), ANSWER_SCHEMA]) {
      expect(schema.type).toBe('object')
      expect(schema.required).toEqual(Object.keys(schema.properties!))
      expect(schema.required![0]).toBe('refused')
      expect(JSON.parse(JSON.stringify(schema))).toEqual(schema)
    }
  })
})

describe('answers', () => {
  const passages = [
    { text: 'The team agreed to ship the beta on March third.', offset: 49, score: 3.1 },
    { text: 'Tom will write the migration guide by Friday.', offset: 98, score: 1.2 },
  ]

  test('sends only the passages and the question, and answers from them', async () => {
    const SECRET = 'The office parrot is called Captain Feathers.'
    const transcript = `${MEETING} ${SECRET} ${'Filler talk about nothing in particular. '.repeat(2000)}`
    expect(transcript.length).toBeGreaterThan(80_000)
    const out = await engine().answer({ question: 'When will the beta ship?', passages, language: 'en' })
    expect(out.answer).toBe('The team agreed to ship the beta on March third.')

    const body = lastChat()
    expect(body.stream).toBe(false)
    expect(body.format).toEqual(ANSWER_SCHEMA)
    const sent = (body.messages as { content: string }[]).map(m => m.content).join('\n')
    expect(sent).toContain('[1] The team agreed to ship the beta on March third.')
    expect(sent).toContain('[2] Tom will write the migration guide by Friday.')
    expect(sent).toContain('Question: When will the beta ship?')
    expect(sent).not.toContain('Captain Feathers')
    expect(sent).not.toContain('Filler talk')
    expect(body.messages[1].content.length).toBeLessThan(500)
    expect(body.messages[0].content).toMatch(/only the numbered passages/)
  })

  test('says so when the passages do not contain the answer', async () => {
    const out = await engine().answer({ question: 'What colour is the parrot?', passages })
    expect(out.answer).toMatch(/does not say/i)
  })

  test('passages beyond the window are left out, best first', async () => {
    fake.contextLength = 4096
    const e = engine()
    await e.ready()
    const big = Array.from({ length: 10 }, (_, i) => ({ text: `Passage ${i}. ${'word '.repeat(400)}`, offset: i * 3000, score: 10 - i }))
    await e.answer({ question: 'Which passage?', passages: big })
    const user = lastChat().messages[1].content as string
    expect(user.length).toBeLessThanOrEqual(e.maxInputChars)
    expect(user).toContain('Passage 0.')
    expect(user).not.toContain('Passage 9.')
  })

  test('no passages: no model call', async () => {
    const out = await engine().answer({ question: 'Anything?', passages: [] })
    expect(out.answer).toMatch(/does not contain/)
    expect(chats()).toHaveLength(0)
  })
})

describe('failures', () => {
  test('Ollama down: LlmUnavailableError naming the host, `ollama serve` and OLLAMA_HOST, after retries', async () => {
    const e = engine({ retries: 2 })
    fake.down()
    const err = await e.summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
    expect(err).toBeInstanceOf(LlmUnavailableError)
    expect(err.message).toContain(`not reachable at ${fake.host}`)
    expect(err.message).toContain('ollama serve')
    expect(err.message).toContain('OLLAMA_HOST')
    expect(err.message).toContain('tried 3 times')
  })

  test('Ollama comes back between retries: the call succeeds', async () => {
    const e = engine({ retries: 3, backoffMs: 150 })
    fake.down()
    setTimeout(() => fake.up(), 100)
    const out = await e.summarize({ text: MEETING, styleId: 'bulletpoints' })
    expectDecisionsShape('bulletpoints', out.structuredContent)
  })

  test('model not pulled (found out by /api/show): says `ollama pull <model>`, no retries', async () => {
    const e = engine({ model: 'mistral:7b', retries: 2 })
    const err = await e.summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
    expect(err).toBeInstanceOf(LlmUnavailableError)
    expect(err.message).toContain('does not have the model "mistral:7b"')
    expect(err.message).toContain('`ollama pull mistral:7b`')
    expect(fake.requestsTo('/api/show')).toHaveLength(1)
    expect(chats()).toHaveLength(0)
  })

  for (const quotes of ['double', 'single'] as const) {
    test(`model removed after start (chat 404, ${quotes} quotes): says \`ollama pull <model>\``, async () => {
      const e = engine()
      await e.ready()
      fake.models = []
      fake.behaviour = { notFoundQuotes: quotes }
      const err = await e.answer({ question: 'When?', passages: [{ text: MEETING, offset: 0, score: 1 }] }).catch(x => x)
      expect(err).toBeInstanceOf(LlmUnavailableError)
      expect(err.message).toContain('`ollama pull llama3.2`')
      expect(chats()).toHaveLength(1)
    })
  }

  test('slow: times out with a clear message', async () => {
    const e = engine({ timeoutMs: 150, retries: 0 })
    await e.ready()
    fake.behaviour = { delayMs: 1000 }
    const err = await e.summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
    // Had the timeout not fired, the delayed reply would have been a summary, not an error.
    expect(err).toBeInstanceOf(LlmUnavailableError)
    expect(chats()).toHaveLength(1)
    expect(err.message).toContain('did not answer within 0.2 s')
    expect(err.message).toContain('llama3.2')
  })

  test('slow once: the retry after the timeout succeeds', async () => {
    const e = engine({ timeoutMs: 150, retries: 1 })
    await e.ready()
    fake.behaviour = { delayMs: 1000, delayTimes: 1 }
    const out = await e.summarize({ text: MEETING, styleId: 'note' })
    expectDecisionsShape('note', out.structuredContent)
    expect(chats()).toHaveLength(2)
  })

  test('500 once then OK: the retry succeeds', async () => {
    fake.behaviour = { fail500Times: 1 }
    const out = await engine().summarize({ text: MEETING, styleId: 'meeting-notes' })
    expectDecisionsShape('meeting-notes', out.structuredContent)
    expect(chats()).toHaveLength(2)
  })

  test('500 every time: LlmUnavailableError with Ollama\'s own words', async () => {
    fake.behaviour = { fail500Times: 100 }
    const err = await engine({ retries: 2 }).summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
    expect(err).toBeInstanceOf(LlmUnavailableError)
    expect(err.message).toContain('failed (500): llama runner process has terminated')
    expect(err.message).toContain('tried 3 times')
    expect(chats()).toHaveLength(3)
  })

  for (const malformed of ['invalid-json', 'wrong-shape'] as const) {
    test(`malformed output (${malformed}) every time: asked twice, then LlmUnavailableError`, async () => {
      fake.behaviour = { malformed }
      const err = await engine().summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
      expect(err).toBeInstanceOf(LlmUnavailableError)
      expect(err.message).toContain('malformed output twice')
      expect(err.message).toMatch(malformed === 'invalid-json' ? /not JSON/ : /does not match the schema/)
      expect(chats()).toHaveLength(2)
    })
  }

  test('malformed output once: the second reply is used', async () => {
    fake.behaviour = { malformed: 'wrong-shape', malformedTimes: 1 }
    const out = await engine().summarize({ text: MEETING, styleId: 'bulletpoints' })
    expectDecisionsShape('bulletpoints', out.structuredContent)
    expect(chats()).toHaveLength(2)
  })

  for (const refusal of ['json', 'text'] as const) {
    test(`refusal (${refusal}): LlmRefusalError, not retried`, async () => {
      fake.behaviour = { refusal }
      const err = await engine().summarize({ text: MEETING, styleId: 'note' }).catch(x => x)
      expect(err).toBeInstanceOf(LlmRefusalError)
      expect(err.message).toContain('declined')
      expect(chats()).toHaveLength(1)
      const err2 = await engine().answer({ question: 'When?', passages: [{ text: MEETING, offset: 0, score: 1 }] }).catch(x => x)
      expect(err2).toBeInstanceOf(LlmRefusalError)
    })
  }

  test('the caller\'s abort is passed through, not retried', async () => {
    const e = engine({ retries: 3 })
    await e.ready()
    fake.behaviour = { delayMs: 2000 }
    const ac = new AbortController()
    setTimeout(() => ac.abort(new Error('job cancelled')), 50)
    const err = await e.summarize({ text: MEETING, styleId: 'note' }, ac.signal).catch(x => x)
    expect(err).not.toBeInstanceOf(LlmUnavailableError)
    expect(err.message).toBe('job cancelled')
    expect(chats()).toHaveLength(1)
  })
})

describe('probe', () => {
  test('up: answers with the models and whether the configured one is there', async () => {
    fake.models = ['llama3.2:latest', 'qwen2.5:7b']
    expect(await engine().probe()).toEqual({ ok: true, models: ['llama3.2:latest', 'qwen2.5:7b'], hasModel: true })
    expect(await engine({ model: 'qwen2.5:7b' }).probe()).toMatchObject({ ok: true, hasModel: true })
    expect(await engine({ model: 'mistral' }).probe()).toMatchObject({ ok: true, hasModel: false })
    expect(fake.requestsTo('/api/tags').every(r => r.method === 'GET')).toBe(true)
  })

  /** fetch as the engine's client calls it, recording each request's abort signal. */
  function recordingFetch() {
    const signals: AbortSignal[] = []
    const f = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      signals.push(init!.signal!)
      return fetch(input, init)
    }) as typeof fetch
    return { fetch: f, signals }
  }

  test('down: ok false with the reason, one try whatever the retries, never throws', async () => {
    fake.down()
    const rec = recordingFetch()
    const p = await engine({ retries: 5, fetch: rec.fetch }).probe()
    expect(p).toEqual({ ok: false, models: [], hasModel: false, error: `Ollama is not reachable at ${fake.host}; start it with \`ollama serve\` or set OLLAMA_HOST to where it runs` })
    // a quick check: no retries, so no backoff to wait through
    expect(rec.signals).toHaveLength(1)
  })

  test('a server that hangs: ok false when its own 1.5 s limit fires, whatever the request timeout', async () => {
    fake.behaviour = { delayMs: 4000 }
    const rec = recordingFetch()
    const p = await engine({ timeoutMs: 60_000, fetch: rec.fetch }).probe()
    // Had the limit not fired, the delayed reply would have listed the models (ok true).
    expect(p.ok).toBe(false)
    expect(p.error).toContain('did not answer within 1.5 s')
    expect(rec.signals).toHaveLength(1)
    expect(rec.signals[0]!.aborted).toBe(true)
    expect(rec.signals[0]!.reason).toHaveProperty('name', 'TimeoutError')
  })
})

describe('maxInputChars from /api/show', () => {
  test('before ready(): the default window of 8192 tokens', () => {
    expect(engine().maxInputChars).toBe(maxInputCharsFor(8192))
  })

  test('a model with a 4096-token window', async () => {
    fake.contextLength = 4096
    const e = engine()
    const info = await e.ready()
    expect(info).toEqual({ modelContextLength: 4096, contextTokens: 4096, maxInputChars: (4096 - 512 - 1024) * 4 })
    expect(e.maxInputChars).toBe(10_240)
    expect(fake.requestsTo('/api/show')[0]!.body).toEqual({ model: 'llama3.2' })
  })

  test('a large window is capped (memory), and the cap can be raised', async () => {
    fake.contextLength = 131072
    const e = engine()
    expect((await e.ready()).contextTokens).toBe(16384)
    expect(e.maxInputChars).toBe((16384 - 512 - 2048) * 4)
    const big = engine({ maxContextTokens: 65536 })
    expect((await big.ready()).contextTokens).toBe(65536)
  })

  test('no context length in model_info: 8192 tokens', async () => {
    fake.contextLength = null
    const e = engine()
    expect(await e.ready()).toEqual({ modelContextLength: null, contextTokens: 8192, maxInputChars: maxInputCharsFor(8192) })
    await e.summarize({ text: MEETING, styleId: 'note' })
    expect(lastChat().options.num_ctx).toBe(8192)
  })

  test('asked once, then remembered', async () => {
    const e = engine()
    await e.summarize({ text: MEETING, styleId: 'note' })
    await e.summarize({ text: MEETING, styleId: 'bulletpoints' })
    expect(fake.requestsTo('/api/show')).toHaveLength(1)
  })
})

describe('helpers', () => {
  test('refusal texts are recognized, ordinary sentences are not', () => {
    for (const t of [
      "I'm sorry, but I can't help with that.",
      'I cannot provide a summary of this content.',
      "I'm unable to assist with this request.",
      'As an AI language model, I cannot summarize this.',
      'I won\'t help with that.',
    ]) expect(looksLikeRefusal(t)).toBe(true)
    for (const t of [
      "I'm sorry I'm late, said Tom, and then we began.",
      'The team cannot ship before March.',
      'Maria will prepare the release notes.',
      'The transcript does not say.',
    ]) expect(looksLikeRefusal(t)).toBe(false)
  })

  test('model names with and without the default tag match', () => {
    expect(sameModel('llama3.2', 'llama3.2:latest')).toBe(true)
    expect(sameModel('library/llama3.2:latest', 'library/llama3.2')).toBe(true)
    expect(sameModel('llama3.2:1b', 'llama3.2:latest')).toBe(false)
  })

  test('the validator names what is wrong', () => {
    expect(validateJson(STYLE_SCHEMAS.note, { refused: false, title: 't', summary: 's', sections: [] })).toEqual([])
    expect(validateJson(STYLE_SCHEMAS.note, { refused: false, title: 1, summary: 's', sections: [{ heading: 'h' }], extra: 1 })).toEqual([
      '$.title: expected string, got integer',
      '$.sections[0].points: missing',
      '$.extra: not allowed',
    ])
    expect(validateJson(STYLE_SCHEMAS['meeting-notes'].properties!.actionItems!, [{ task: 't', owner: null, due: 3 }])).toEqual([
      '$[0].due: expected string or null, got integer',
    ])
  })
})

describe('the stand-in speaks the protocol to the real client', () => {
  test('streamed chat (NDJSON, the default) ends with done and stats', async () => {
    const client = new Ollama({ host: fake.host })
    const parts: string[] = []
    let last: any
    for await (const part of await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: MEETING }], stream: true })) {
      parts.push(part.message.content)
      last = part
    }
    expect(parts.length).toBeGreaterThan(5)
    expect(parts.join('')).toBe(SEGMENTS.map(s => s.text).join(' '))
    expect(last.done).toBe(true)
    expect(last.done_reason).toBe('stop')
    expect(last.eval_count).toBeGreaterThan(0)
  })

  test('streamed and non-streamed generate, with a schema and with "json"', async () => {
    const client = new Ollama({ host: fake.host })
    let text = ''
    for await (const part of await client.generate({ model: 'llama3.2', prompt: MEETING, format: STYLE_SCHEMAS.bulletpoints, stream: true })) text += part.response ?? ''
    expect(validateJson(STYLE_SCHEMAS.bulletpoints, JSON.parse(text))).toEqual([])
    const one = await client.generate({ model: 'llama3.2', prompt: MEETING, format: 'json', stream: false })
    expect(JSON.parse(one.response ?? '')).toBeObject()
    expect(one.done).toBe(true)
  })

  test('errors as Ollama sends them', async () => {
    const client = new Ollama({ host: fake.host })
    const missing = await client.chat({ model: 'nope', messages: [{ role: 'user', content: 'hi' }] }).catch(x => x)
    expect(missing.status_code).toBe(404)
    expect(missing.error).toBe('model "nope" not found, try pulling it first')
    const show = await client.show({ model: 'nope' }).catch(x => x)
    expect(show.status_code).toBe(404)
    expect(show.error).toBe("model 'nope' not found")
    const root = await fetch(fake.host)
    expect(await root.text()).toBe('Ollama is running')
  })
})
