import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { parse as parseDisposition } from 'content-disposition'
import { parse as parseVtt } from 'node-webvtt'
import { parseSync as parseSubtitles } from 'subtitle'
import { createTestApp } from '../../helpers/app'
import { backEnds } from '../../helpers/backends'
import { closingAfterEach } from '../../helpers/closing'
import { LIBRIVOX_HEARD } from '../../fixtures/librivox-heard'
import { speechWav } from '../../fixtures/speech'

// `GET /v1/notes/{id}/transcript?format=` on a note PocketSphinx transcribed from real LibriVox speech
// (Debian's pocketsphinx-testdata), read back with real subtitle parsers from npm.

setDefaultTimeout(60_000)

type TestApp = ReturnType<typeof createTestApp>
let t: TestApp
let token: string
let noteId: string
/** the recording's length, as completeUpload measured it */
let recordingSeconds: number
/** what the user named the note: quotes, an accent, a dash and CJK */
const TITLE = 'Réunion "Q3" — 東京 plan'

async function waitDone(id: string) {
  for (let i = 0; i < 3000; i++) {
    const s = (await t.call('GET', `/v1/notes/${id}/status`, { token })).body
    if (s.status !== 'Summarizing') return s
    await Bun.sleep(50)
  }
  throw new Error(`note ${id} still processing`)
}

const get = (id: string, format?: string) => t.call('GET', `/v1/notes/${id}/transcript${format ? `?format=${format}` : ''}`, { token })

/**
 * Cues (ms) a screen can show, cut from `segments` (ms): at most 2 lines of 42 characters and 7 s,
 * in order without overlap, each segment's first cue at its start and its last at its end, and the
 * words of the cues those of the segments.
 */
function expectScreenSized(cues: Array<{ start: number; end: number; text: string }>, segments: Array<{ start: number; end: number; text: string }>) {
  expect(cues.map(c => c.text.replaceAll('\n', ' ')).join(' ')).toBe(segments.map(s => s.text).join(' '))
  let previousEnd = 0
  for (const c of cues) {
    const lines = c.text.split('\n')
    expect(lines.length, c.text).toBeLessThanOrEqual(2)
    for (const l of lines) expect(l.length, c.text).toBeLessThanOrEqual(42)
    expect(c.end - c.start, c.text).toBeLessThanOrEqual(7000)
    expect(c.start).toBeGreaterThanOrEqual(previousEnd)
    previousEnd = c.end
  }
  const starts = new Set(cues.map(c => c.start))
  const ends = new Set(cues.map(c => c.end))
  for (const s of segments) {
    expect(starts.has(s.start), `a cue starts at ${s.start}`).toBe(true)
    expect(ends.has(s.end), `a cue ends at ${s.end}`).toBe(true)
  }
}

beforeAll(async () => {
  // NOTESVC_ASR=auto with an empty models folder: PocketSphinx, installed on this machine
  t = createTestApp({ env: { NOTESVC_WORKERS: '1', NOTESVC_DIARIZATION: 'off', NOTESVC_RATE_LIMITS: 'read=100000,write=1000,processing=1000' } })
  await t.services.workers.start()
  token = await t.key()
  // 12 s of real speech: several clips one after another, so PocketSphinx hears several utterances
  const wav = speechWav(12)
  const up = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'reading.wav', contentType: 'audio/wav', fileSize: wav.length } })).body
  const put = await t.app.handle(new Request(up.uploadUrl.replace(/^https?:\/\/[^/]+/, 'http://localhost'), { method: 'PUT', body: wav as unknown as BodyInit, headers: up.headers }))
  expect(put.status).toBe(200)
  const done = await t.call('POST', `/v1/uploads/${up.noteId}/complete`, { token })
  expect(done.status).toBe(202)
  recordingSeconds = done.body.durationSeconds
  expect((await waitDone(up.noteId)).status).toBe('Done')
  noteId = up.noteId
  expect((await t.call('PATCH', `/v1/notes/${noteId}`, { token, body: { title: TITLE } })).status).toBe(200)
})
afterAll(async () => { await t.services.workers.stop() })

describe('a note transcribed by PocketSphinx', () => {
  test('json (and no format) is the interface\'s Transcript, unchanged; only an explicit format adds a file name', async () => {
    const plain = await get(noteId)
    expect(plain.status).toBe(200)
    expect(Object.keys(plain.body).sort()).toEqual(['language', 'noteId', 'transcript'])
    expect(plain.body.noteId).toBe(noteId)
    expect(plain.body.language).toBe('en')
    expect(plain.body.transcript.split(' ').length).toBeGreaterThan(10)
    expect(plain.headers.get('content-disposition')).toBeNull()
    const json = await get(noteId, 'json')
    expect(json.body).toEqual(plain.body)
    expect(json.headers.get('content-type')).toStartWith('application/json')
    expect(parseDisposition(json.headers.get('content-disposition')!).parameters.filename).toBe(`${TITLE}.json`)
  })

  test('verbose_json: timed segments whose text is the transcript, and PocketSphinx\'s word times inside them', async () => {
    const plain = (await get(noteId)).body
    const r = await get(noteId, 'verbose_json')
    expect(r.status).toBe(200)
    const v = r.body
    expect(v).toMatchObject({ noteId, transcript: plain.transcript, language: 'en', timed: true })
    expect(v.segments.length).toBeGreaterThanOrEqual(2)
    expect(v.segments.map((s: any) => s.text).join(' ')).toBe(plain.transcript)
    expect(v.segments.map((s: any) => s.id)).toEqual(v.segments.map((_: unknown, i: number) => i))
    let previousEnd = 0
    for (const s of v.segments) {
      expect(s.start).toBeGreaterThanOrEqual(previousEnd)
      expect(s.end).toBeGreaterThan(s.start)
      previousEnd = s.end
    }
    expect(v.duration).toBe(v.segments.at(-1).end)
    expect(v.duration).toBeLessThanOrEqual(recordingSeconds)
    expect(v.duration).toBeGreaterThan(recordingSeconds - 3)
    // every word of the transcript, in order, each inside the segment that holds it
    expect(v.words.map((w: any) => w.word).join(' ')).toBe(plain.transcript)
    for (const w of v.words) {
      const seg = v.segments.find((s: any) => w.start >= s.start && w.end <= s.end)
      expect(seg, JSON.stringify(w)).toBeDefined()
      expect(w.end).toBeGreaterThanOrEqual(w.start)
      // how sure the engine was of it (PocketSphinx's posterior), what the page marks doubtful words by
      expect(w.confidence).toBeGreaterThanOrEqual(0)
      expect(w.confidence).toBeLessThanOrEqual(1)
    }
  })

  test('srt: application/x-subrip that the `subtitle` parser reads, screen-sized cues holding the transcript\'s words in order', async () => {
    const segments = (await get(noteId, 'verbose_json')).body.segments
    const r = await get(noteId, 'srt')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('application/x-subrip; charset=utf-8')
    const cues = parseSubtitles(r.text).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    expectScreenSized(cues, segments.map((s: any) => ({ start: Math.round(s.start * 1000), end: Math.round(s.end * 1000), text: s.text })))
    expect(r.text).toStartWith('1\n00:00:')
  })

  test('vtt: text/vtt that node-webvtt validates strictly, the same cues as srt', async () => {
    const srt = parseSubtitles((await get(noteId, 'srt')).text).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    const r = await get(noteId, 'vtt')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/vtt; charset=utf-8')
    const parsed = parseVtt(r.text, { strict: true })
    expect(parsed.valid).toBe(true)
    expect(parsed.cues.map(c => ({ start: Math.round(c.start * 1000), end: Math.round(c.end * 1000), text: c.text })))
      .toEqual(srt.map(c => ({ start: c.start, end: c.end, text: c.text })))
  })

  test('txt: text/plain, exactly the transcript and a final newline', async () => {
    const plain = (await get(noteId)).body
    const r = await get(noteId, 'txt')
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(r.text).toBe(`${plain.transcript}\n`)
  })

  test('Content-Disposition: the title as the file name (RFC 5987 filename*), with a plain ASCII fallback', async () => {
    for (const [format, ext] of [['srt', 'srt'], ['vtt', 'vtt'], ['txt', 'txt'], ['verbose_json', 'json']]) {
      const header = (await get(noteId, format)).headers.get('content-disposition')!
      expect(header).toMatch(/^[\x20-\x7e]+$/) // a header is ASCII
      expect(header).toStartWith('attachment;')
      expect(header).toContain(`filename*=UTF-8''R%C3%A9union%20%22Q3%22%20%E2%80%94%20%E6%9D%B1%E4%BA%AC%20plan.${ext}`)
      expect(header).toContain(`filename="Reunion _Q3_ _ __ plan.${ext}"`)
      expect(parseDisposition(header).parameters.filename).toBe(`${TITLE}.${ext}`)
    }
  })

  test('the stored times stay out of the note: getNote\'s structuredContent is the summary\'s alone', async () => {
    const note = (await t.call('GET', `/v1/notes/${noteId}`, { token })).body
    expect(Object.keys(note.structuredContent)).toEqual(['note'])
    expect(JSON.stringify(note)).not.toContain('"segments"')
  })
})

// The meeting of issue 23: one segment of 28 s and 84 words, 10 lines as one cue before cues were
// cut. Its words and times are PocketSphinx's (test/fixtures/librivox-heard.ts: three utterances
// heard one after another, as one segment).
describe('a note whose transcript is one 28 s segment', () => {
  const [a, b, c] = LIBRIVOX_HEARD.slice(2)
  const words = [...a!.words, ...b!.words, ...c!.words.slice(0, 9)]
  const segment = { start: words[0]!.start, end: words.at(-1)!.end, text: words.map(w => w.word).join(' '), words }
  let id: string
  beforeAll(async () => {
    const accountId = (await t.store.get<{ account_id: string }>('SELECT account_id FROM notes WHERE id = ?', [noteId]))!.account_id
    const pending = await t.services.notes.createPending({ accountId, sandbox: false }, { title: 'Meeting', type: 'audio', styleId: 'meeting', language: null, source: 'upload', stage: 'queued' })
    await t.services.notes.finish(pending.id, { summary: 'S', transcript: segment.text, structuredContent: null, language: 'en', segments: [segment] })
    id = pending.id
  })

  test('srt and vtt: screen-sized cues, cut at the pauses PocketSphinx heard, the same in both', async () => {
    expect(segment.end - segment.start).toBeCloseTo(28, 6)
    const r = await get(id, 'srt')
    expect(r.status).toBe(200)
    const cues = parseSubtitles(r.text).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    expectScreenSized(cues, [{ start: 10300, end: 38300, text: segment.text }])
    expect(cues.map(c => [c.start, c.end, c.text])).toEqual([
      [10300, 13850, 'less to be rather cold\nhearted and rather selfish is'],
      [13860, 17770, 'to be oldest those happy\nmarried to more amiable woman'],
      [17780, 20490, 'he might have been made still\nmore respectable that he'],
      [20500, 24270, 'was he might even have been\nmade a real blow himself'], // 0.56 s pause after "himself"
      [24830, 28060, 'at mr john guess would have\nbeen at leisure to consider'],
      [28070, 31260, 'how much there might be\nprickly in his power to do for'], // 0.75 s pause after "for"
      [32010, 35300, 'he was not until this blows young man less'],
      [35310, 38300, 'to be rather cold hearted\nand rather selfish'],
    ])
    expect(r.text.split('\n').filter(l => /^\d+$/.test(l))).toEqual(cues.map((_, i) => String(i + 1)))
    const vtt = parseVtt((await get(id, 'vtt')).text, { strict: true })
    expect(vtt.valid).toBe(true)
    expect(vtt.cues.map(c => [Math.round(c.start * 1000), Math.round(c.end * 1000), c.text])).toEqual(cues.map(c => [c.start, c.end, c.text]))
  })
})

describe('a note created from text', () => {
  const CONTENT = 'Agenda for Monday.\nBudget first.\n\n  Then hiring: two engineers.  \n\n\nAny other business.'
  let id: string
  beforeAll(async () => {
    id = (await t.call('POST', '/v1/notes', { token, body: { title: 'Board / minutes', content: CONTENT } })).body.id
  })

  test('json is the Transcript; txt is one paragraph per block, nothing invented', async () => {
    expect((await get(id, 'json')).body).toEqual({ noteId: id, transcript: CONTENT, language: null })
    const txt = await get(id, 'txt')
    expect(txt.status).toBe(200)
    expect(txt.text).toBe('Agenda for Monday.\nBudget first.\n\nThen hiring: two engineers.\n\nAny other business.\n')
    // a slash in the title cannot make a path
    expect(parseDisposition(txt.headers.get('content-disposition')!).parameters.filename).toBe('Board minutes.txt')
  })

  test('verbose_json: one segment per paragraph, times null, no words', async () => {
    const r = await get(id, 'verbose_json')
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      noteId: id, transcript: CONTENT, language: null, timed: false, duration: null,
      segments: [
        { id: 0, start: null, end: null, text: 'Agenda for Monday.\nBudget first.' },
        { id: 1, start: null, end: null, text: 'Then hiring: two engineers.' },
        { id: 2, start: null, end: null, text: 'Any other business.' },
      ],
    })
  })

  test.each(['srt', 'vtt'])('%s: 409 conflict that says why and what to ask for instead', async format => {
    const r = await get(id, format)
    expect(r.status).toBe(409)
    expect(r.body.error.code).toBe('conflict')
    expect(r.body.error.message).toContain('created from text')
    expect(r.body.error.message).toContain('format=txt')
    expect(r.headers.get('content-disposition')).toBeNull()
  })
})

describe('refusals', () => {
  test.each(['pdf', 'JSON', '', 'srt,vtt'])('format=%p: 400 invalid_request naming format', async format => {
    const r = await t.call('GET', `/v1/notes/${noteId}/transcript?format=${encodeURIComponent(format)}`, { token })
    expect(r.status).toBe(400)
    expect(r.body.error.code).toBe('invalid_request')
    expect(r.body.error.details).toEqual([{ field: 'format', issue: 'must be one of json, verbose_json, diarized_json, srt, vtt, txt' }])
  })

  test('a note still processing: 409 for every format', async () => {
    const pending = (await t.call('POST', '/v1/uploads', { token, body: { fileName: 'later.wav', contentType: 'audio/wav' } })).body
    for (const format of ['json', 'srt', 'txt']) expect((await get(pending.noteId, format)).status).toBe(409)
  })

  test('another library\'s note: 404', async () => {
    const other = await t.key({ email: 'other@example.com' })
    const r = await t.call('GET', `/v1/notes/${noteId}/transcript?format=srt`, { token: other })
    expect(r.status).toBe(404)
  })
})

// The times are stored with the note on either back end: a sandbox upload (Done at once, the fixed
// sample's times, no engine) read back as SubRip, and the note itself without them.
for (const b of backEnds) describe.skipIf(b.skip)(`a sandbox upload on ${b.name}`, () => {
  const open = closingAfterEach(b)

  test('exports the fixed sample transcript with its fixed times; getNote shows no times', async () => {
    const s = createTestApp({ store: await open() })
    const sandbox = await s.key({ sandbox: true })
    const up = (await s.call('POST', '/v1/uploads', { token: sandbox, body: { fileName: 'x.wav', contentType: 'audio/wav', styleId: 'meeting-notes' } })).body
    expect((await s.call('POST', `/v1/uploads/${up.noteId}/complete`, { token: sandbox })).status).toBe(202)
    const srt = await s.call('GET', `/v1/notes/${up.noteId}/transcript?format=srt`, { token: sandbox })
    expect(srt.status).toBe(200)
    const cues = parseSubtitles(srt.text).flatMap(n => (n.type === 'cue' ? [n.data] : []))
    // the sample's 8.5 s segment (13.1-21.6 s, no word times) is two cues sharing its time by characters: a cue is at most 7 s
    expect(cues.map(c => [c.start, c.end])).toEqual([[0, 4200], [4200, 9800], [9800, 13100], [13100, 16971], [16971, 21600], [21600, 26000], [26000, 28400]])
    // two balanced lines, not one full and one of a word
    expect(cues[0]!.text).toBe('Welcome everyone to the\nweekly planning meeting.')
    const note = (await s.call('GET', `/v1/notes/${up.noteId}`, { token: sandbox })).body
    expect(Object.keys(note.structuredContent)).toEqual(['meeting-notes'])
  })
})
