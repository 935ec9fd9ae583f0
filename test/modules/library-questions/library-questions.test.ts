import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closedAfterAll } from '../../helpers/closing'
import { startFakeOllama } from '../../helpers/fake-ollama'
import type { TranscriptSegment } from '../../../src/engines/asr/engine'

/**
 * POST /v1/questions (askLibrary) on both back ends, as a user asking across their library notices it:
 * the note and the moment the first citation points at, with the link that opens the note there; the
 * "nothing" answer (uncharged) when the library does not speak of it; another account's notes never
 * cited; the filters; bad input answered 400. The recordings are stored as the pipeline stores them
 * (saveTranscript with timed, diarized segments, then finish); the text notes through the API.
 */
const opened = closedAfterAll()

type Seg = [start: number, end: number, speaker: string, text: string]
const segments = (rows: Seg[]): TranscriptSegment[] => rows.map(([start, end, speaker, text]) => ({ start, end, speaker, text }))

const RECORDINGS: Record<string, { title: string; segments: Seg[] }> = {
  warehouse: {
    title: 'Warehouse planning',
    segments: [
      [0, 6, 'A', 'Good morning, let us go over the warehouse plan for the spring.'],
      [6, 14.5, 'B', 'The loading bays on the north side will be repaved in April by Kessler Paving.'],
      [14.5, 20, 'A', 'Fine. And what about the forklift training?'],
      [20, 28, 'B', 'Forklift training moves to the second week of May, and Priya runs it.'],
    ],
  },
  budget: {
    title: 'Quarterly budget review',
    segments: [
      [0, 5, 'A', 'Thanks for joining the review.'],
      [5, 13.25, 'B', 'The marketing budget for the third quarter is forty two thousand euros.'],
      [13.25, 21, 'A', 'Then we drop the trade fair in Lyon to stay under that figure.'],
    ],
  },
  hiring: {
    title: 'Hiring sync',
    segments: [
      [0, 9, 'A', 'We will hire two backend engineers before the end of June.'],
      [9, 17.5, 'B', 'Olga interviews the candidates on Tuesdays and Thursdays.'],
    ],
  },
}

/** Questions whose answers sit in known places: the note, when (null: a text note), who said it, a word of the answer. */
const QUESTIONS = [
  { question: 'Who repaves the loading bays?', note: 'warehouse', start: 6, end: 14.5, speaker: 'Speaker B', word: 'Kessler' },
  { question: 'How large is the marketing budget for the third quarter?', note: 'budget', start: 5, end: 13.25, speaker: 'Speaker B', word: 'forty two thousand' },
  { question: 'Who interviews the candidates?', note: 'hiring', start: 9, end: 17.5, speaker: 'Speaker B', word: 'Olga' },
  { question: 'When does the new office on Baker Street open?', note: 'office', start: null, end: null, speaker: null, word: 'first of September' },
] as const

const OFFICE_TEXT = 'Office move.\n\nThe new office on Baker Street opens on the first of September. The landlord hands over the keys on August 28.'
const NOTHING = 'Nothing in the library answers this.'

for (const b of backEnds) describe.skipIf(b.skip)(`asking the library on ${b.name}`, () => {
  let t: ReturnType<typeof createTestApp>
  let token: string
  let otherToken: string
  const ids: Record<string, string> = {}
  let folderId: string

  async function recorded(key: string, title: string, rows: Seg[]) {
    const up = await t.call('POST', '/v1/uploads', { token: key, body: { fileName: `${title}.wav`, contentType: 'audio/wav' } })
    expect(up.status).toBe(201)
    const id = up.body.noteId as string
    const segs = segments(rows)
    const labels = [...new Set(rows.map(r => r[2]))]
    await t.services.notes.saveTranscript(id, {
      transcript: rows.map(r => r[3]).join(' '), language: 'en', segments: segs,
      speakers: labels.map(label => ({ label, name: null, engine: 'builtin', embedding: null, profileId: null })),
    })
    await t.services.notes.finish(id, { title, summary: `Notes of ${title}.`, language: 'en', segments: segs, structuredContent: null })
    return id
  }

  beforeAll(async () => {
    const store = await b.open()
    opened.push(store)
    t = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000' } })
    token = await t.key({ plan: 'pro' })
    otherToken = await t.key({ email: 'other@example.com', plan: 'pro' })
    for (const [key, r] of Object.entries(RECORDINGS)) ids[key] = await recorded(token, r.title, r.segments)
    const office = await t.call('POST', '/v1/notes', { token, body: { title: 'Office move', content: OFFICE_TEXT } })
    expect(office.status).toBe(201)
    ids.office = office.body.id
    // distractors that share words with the questions without answering them
    for (const content of ['The loading dock schedule is on the wiki.', 'Budget spreadsheets live in the shared drive.', 'Candidates get a reply within a week.']) {
      expect((await t.call('POST', '/v1/notes', { token, body: { title: 'Misc', content } })).status).toBe(201)
    }
    // another account's note that would answer a question better than anything of the first account's
    ids.foreign = await recorded(otherToken, 'Depot paint job', [[0, 7, 'A', 'Zed Corp paints the loading bays purple in October.']])
    const folder = await t.call('POST', '/v1/folders', { token, body: { name: 'Hiring' } })
    folderId = folder.body.id
    expect((await t.call('PATCH', `/v1/notes/${ids.hiring}`, { token, body: { folderId } })).status).toBe(200)
  })

  for (const q of QUESTIONS) {
    test(`"${q.question}": the first citation is the note and moment that answer it, linked there; 1 credit`, async () => {
      const before = (await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining
      const r = await t.call('POST', '/v1/questions', { token, body: { question: q.question } })
      expect(r.status).toBe(200)
      expect(r.body.question).toBe(q.question)
      expect(r.body.answer).toContain(q.word)
      // the builtin engine's answer is the passages' own words: no label of where they come from
      // (a title, a time range, a speaker) cut into it
      expect(r.body.answer).not.toMatch(/\d:\d\d–\d:\d\d|^\(|\) Speaker /)
      const first = r.body.citations[0]
      expect(first).toEqual({
        noteId: ids[q.note], title: q.note === 'office' ? 'Office move' : RECORDINGS[q.note]!.title, start: q.start, end: q.end, speaker: q.speaker,
        text: expect.stringContaining(q.word),
        url: q.start === null ? `/notes/${ids[q.note]}` : `/notes/${ids[q.note]}?t=${q.start}`,
      })
      expect(r.body.creditsCharged).toBe(1)
      expect(Number(r.headers.get('x-credits-remaining'))).toBe(before - 1)
    })
  }

  test('nothing in the library speaks of it: the "nothing" answer, no citations, nothing charged', async () => {
    const before = (await t.call('GET', '/v1/usage', { token })).body.balance.totalRemaining
    for (const question of ['What is the recipe for pumpkin soup?', 'Who paints the loading bays purple?', '???']) {
      const r = await t.call('POST', '/v1/questions', { token, body: { question } })
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ question, answer: NOTHING, citations: [], creditsCharged: 0 })
      expect(Number(r.headers.get('x-credits-remaining'))).toBe(before)
    }
  })

  test("another account's notes are never cited; its own question finds them", async () => {
    const mine = await t.call('POST', '/v1/questions', { token, body: { question: 'Which company paints the loading bays purple in October?' } })
    expect(mine.status).toBe(200)
    expect(mine.body.citations.map((c: { noteId: string }) => c.noteId)).not.toContain(ids.foreign)
    expect(mine.body.answer).not.toContain('Zed')
    const theirs = await t.call('POST', '/v1/questions', { token: otherToken, body: { question: 'Which company paints the loading bays purple in October?' } })
    expect(theirs.body.citations[0]).toMatchObject({ noteId: ids.foreign, start: 0, url: `/notes/${ids.foreign}?t=0` })
    expect(theirs.body.citations.every((c: { noteId: string }) => c.noteId === ids.foreign)).toBe(true)
  })

  test('a folder, the top level and a date range narrow what is asked', async () => {
    const ask = async (extra: Record<string, unknown>) => (await t.call('POST', '/v1/questions', { token, body: { question: 'Who interviews the candidates?', ...extra } })).body
    expect((await ask({ folderId })).citations[0].noteId).toBe(ids.hiring)
    expect((await ask({ folderId: null })).citations.map((c: { noteId: string }) => c.noteId)).not.toContain(ids.hiring)
    const today = new Date().toISOString().slice(0, 10)
    expect((await ask({ from: today, to: today })).citations[0].noteId).toBe(ids.hiring)
    expect(await ask({ to: '2001-01-01' })).toMatchObject({ answer: NOTHING, citations: [] })
    expect(await ask({ from: '2999-01-01T00:00:00Z' })).toMatchObject({ answer: NOTHING, citations: [] })
  })

  test('a sandbox key gets the fixed answer, charged nothing', async () => {
    const sandbox = await t.key({ sandbox: true })
    const r = await t.call('POST', '/v1/questions', { token: sandbox, body: { question: 'Who repaves the loading bays?' } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ question: 'Who repaves the loading bays?', citations: [], creditsCharged: 0, notice: expect.stringContaining('Sandbox') })
    expect(r.body.answer).toStartWith('Sample answer')
  })

  test('the one note holding every word of the question wins over 25 that repeat some of them in title and summary', async () => {
    const key = await t.key({ email: 'crowded@example.com', plan: 'pro' })
    for (let i = 0; i < 25; i++) {
      const repeated = Array(8).fill('Karin review notes.').join(' ')
      expect((await t.call('POST', '/v1/notes', { token: key, body: { title: `Karin review ${i}`, content: `${repeated} Karin will review the awards.` } })).status).toBe(201)
    }
    const kilns = await recorded(key, 'Kiln order', [[0, 4, 'A', 'Good morning.'], [4, 9.5, 'B', 'Karin will review the kilns for Quartz by Friday.']])
    const r = await t.call('POST', '/v1/questions', { token: key, body: { question: 'By when does Karin review the kilns?' } })
    expect(r.body.citations[0]).toMatchObject({ noteId: kilns, start: 4, end: 9.5 })
    expect(r.body.answer).toContain('Friday')
  })

  test('"notes" in a question is looked up as note, not as "not"', async () => {
    const key = await t.key({ email: 'notes@example.com', plan: 'pro' })
    for (let i = 0; i < 25; i++) expect((await t.call('POST', '/v1/notes', { token: key, body: { title: `Status ${i}`, content: 'The releases are not ready yet, not at all, not today.' } })).status).toBe(201)
    const meeting = await recorded(key, 'Weekly meeting', [[0, 3, 'A', 'Hello.'], [3, 8, 'B', 'Tom will finish the release notes by Thursday.']])
    const r = await t.call('POST', '/v1/questions', { token: key, body: { question: 'What about the release notes?' } })
    expect(r.body.citations[0]).toMatchObject({ noteId: meeting, start: 3 })
  })

  const BAD: [string, unknown, string][] = [
    ['no question', {}, 'question'],
    ['an empty question', { question: '' }, 'question'],
    ['a question of 2001 characters', { question: 'x'.repeat(2001) }, 'question'],
    ['a question that is not text', { question: 42 }, 'question'],
    ['a field the operation does not take', { question: 'budget?', tags: ['x'] }, 'tags'],
    ['from that is not a date', { question: 'budget?', from: 'yesterday' }, 'from'],
    ['to that is no real day', { question: 'budget?', to: '2026-02-31' }, 'to'],
    ['from after to', { question: 'budget?', from: '2026-03-02', to: '2026-03-01' }, 'from'],
    ['a NUL in the question', { question: 'budget\u0000?' }, 'question'],
  ]
  for (const [what, body, field] of BAD) {
    test(`${what}: 400 naming ${field}`, async () => {
      const r = await t.call('POST', '/v1/questions', { token, body })
      expectEnvelope(r, 400, 'invalid_request')
      expect(JSON.stringify(r.body.error.details ?? r.body.error.message)).toContain(field)
    })
  }
})

/**
 * NOTESVC_ASK_EMBED_MODEL: BM25's best passages re-ranked by Ollama's embeddings (the stand-in of
 * test/helpers/fake-ollama.ts speaks /api/embed; its vectors here are chosen so that it disagrees with
 * BM25), off by default, and BM25's order when Ollama cannot embed.
 */
describe('Ollama: the answer, and re-ranking by embeddings', () => {
  const DEPOT: Seg[] = [
    [0, 5, 'A', 'The bays need new paint before the inspection, and the paint is ordered.'],
    [5, 11, 'B', 'Kessler Paving paints the loading bays in April.'],
  ]
  const QUESTION = 'Who paints the bays?'
  /** the question and the passage naming Kessler point one way, everything else the other */
  const embed = (text: string) => (text === QUESTION || text.includes('Kessler') ? [1, 0] : [0, 1])
  const fake = startFakeOllama({ models: ['llama3.2:latest', 'all-minilm:latest'], embed })
  afterAll(() => fake.stop())

  async function depotApp(env: Record<string, string>) {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', ...env } })
    const token = await t.key({ plan: 'pro' })
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'depot.wav', contentType: 'audio/wav' } })
    const segs = segments(DEPOT)
    await t.services.notes.saveTranscript(up.body.noteId, { transcript: DEPOT.map(r => r[3]).join(' '), language: 'en', segments: segs, speakers: [] })
    await t.services.notes.finish(up.body.noteId, { title: 'Depot', summary: 'Depot works.', language: 'en', segments: segs, structuredContent: null })
    const first = async () => (await t.call('POST', '/v1/questions', { token, body: { question: QUESTION } })).body.citations.map((c: { start: number }) => c.start)
    return { first }
  }

  test('off by default: BM25 alone cites the passage with both words first; Ollama is not asked', async () => {
    const before = fake.requestsTo('/api/embed').length
    const { first } = await depotApp({ OLLAMA_HOST: fake.host })
    expect(await first()).toEqual([0, 5])
    expect(fake.requestsTo('/api/embed').length).toBe(before)
  })

  test('on: the question and the passages are embedded, and the passage the embeddings prefer is cited first', async () => {
    const before = fake.requestsTo('/api/embed').length
    const { first } = await depotApp({ OLLAMA_HOST: fake.host, NOTESVC_ASK_EMBED_MODEL: 'all-minilm' })
    expect(await first()).toEqual([5, 0])
    const sent = fake.requestsTo('/api/embed').slice(before)
    expect(sent.map(r => [r.body.model, r.body.input[0], r.body.input.length])).toEqual([['all-minilm', QUESTION, 3]])
  })

  test("NOTESVC_LLM=ollama: Ollama answers from the passages, each sent with its note's title, time and speaker", async () => {
    const before = fake.requestsTo('/api/chat').length
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=1000,write=1000,processing=1000', NOTESVC_LLM: 'ollama', OLLAMA_HOST: fake.host } })
    const token = await t.key({ plan: 'pro' })
    const up = await t.call('POST', '/v1/uploads', { token, body: { fileName: 'depot.wav', contentType: 'audio/wav' } })
    const segs = segments(DEPOT)
    await t.services.notes.saveTranscript(up.body.noteId, { transcript: DEPOT.map(r => r[3]).join(' '), language: 'en', segments: segs, speakers: [] })
    await t.services.notes.finish(up.body.noteId, { title: 'Depot', summary: 'Depot works.', language: 'en', segments: segs, structuredContent: null })
    const r = await t.call('POST', '/v1/questions', { token, body: { question: QUESTION } })
    expect(r.status).toBe(200)
    expect(r.body.answer).toMatch(/\S/)
    expect(r.body.citations[0]).toMatchObject({ noteId: up.body.noteId, start: 0 })
    const chats = fake.requestsTo('/api/chat').slice(before)
    const user = chats.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'user').content as string
    expect(user).toContain('(Depot 0:05–0:11) Speaker B: Kessler Paving paints the loading bays in April.')
    expect(user).toContain(QUESTION)
  })

  test('Ollama down: BM25 order, the question still answered', async () => {
    const { first } = await depotApp({ OLLAMA_HOST: fake.host, NOTESVC_ASK_EMBED_MODEL: 'all-minilm' })
    fake.down()
    try {
      expect(await first()).toEqual([0, 5])
    } finally {
      fake.up()
    }
  })
})
