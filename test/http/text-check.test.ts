import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Store } from '../../src/db/store'
import { backEnds } from '../helpers/backends'
import { createTestApp, type CallResult } from '../helpers/app'

/**
 * Text the database cannot hold (docs/decisions.md, "Requests"): U+0000 anywhere in a path
 * parameter, a declared query parameter, a JSON body, an MCP tool's arguments or the OpenAI form's
 * fields, and a lone surrogate in a body, are refused with 400 invalid_request naming the field, on
 * SQLite and on PostgreSQL alike. PostgreSQL's text cannot hold U+0000, and before the check every
 * such request that reached it was a 500 there while SQLite accepted it.
 */

const NUL = '\u0000'

interface Ids {
  noteId: string
  folderId: string
}

interface Case {
  name: string
  method: string
  /** `{note}` and `{folder}` become real ids */
  path: string
  body?: (ids: Ids) => unknown
  /** the field `details` must name */
  field: string
}

const note = (ids: Ids) => ({ title: 'A note', content: 'Some text.', folderId: ids.folderId, source: 'api', format: 'markdown' })
const upload = { fileName: 'memo.wav', contentType: 'audio/wav', language: 'en' }
const webhook = { url: 'https://hooks.example.com/notesvc', events: ['note.completed'], description: 'CRM sync' }

/** One case per string field of each operation that takes one, each holding a NUL. */
const bodyCases: Case[] = [
  ...['title', 'content', 'folderId', 'source', 'format'].map(field => ({ name: `createNote ${field}`, method: 'POST', path: '/v1/notes', body: (ids: Ids) => ({ ...note(ids), [field]: `x${NUL}y` }), field })),
  ...['title', 'summary', 'folderId'].map(field => ({ name: `updateNote ${field}`, method: 'PATCH', path: '/v1/notes/{note}', body: () => ({ [field]: `x${NUL}` }), field })),
  ...['name', 'color'].map(field => ({ name: `createFolder ${field}`, method: 'POST', path: '/v1/folders', body: () => ({ name: 'Projects', [field]: `${NUL}` }), field })),
  ...['name', 'color'].map(field => ({ name: `updateFolder ${field}`, method: 'PATCH', path: '/v1/folders/{folder}', body: () => ({ [field]: `x${NUL}` }), field })),
  ...['fileName', 'contentType', 'language'].map(field => ({ name: `createUpload ${field}`, method: 'POST', path: '/v1/uploads', body: () => ({ ...upload, [field]: `${NUL}memo` }), field })),
  ...['url', 'description'].map(field => ({ name: `createWebhook ${field}`, method: 'POST', path: '/v1/webhooks', body: () => ({ ...webhook, [field]: `https://hooks.example.com/${NUL}` }), field })),
  { name: 'createWebhook events (an array item)', method: 'POST', path: '/v1/webhooks', body: () => ({ ...webhook, events: [`note.completed${NUL}`] }), field: 'events.0' },
  { name: 'askNoteQuestion question', method: 'POST', path: '/v1/notes/{note}/questions', body: () => ({ question: `When${NUL}?` }), field: 'question' },
  { name: 'createSummary text', method: 'POST', path: '/v1/summaries', body: () => ({ text: `The beta ships${NUL} in March.` }), field: 'text' },
  { name: 'createTranscription audioUrl', method: 'POST', path: '/v1/transcriptions', body: () => ({ audioUrl: `https://example.com/${NUL}.mp3` }), field: 'audioUrl' },
  { name: 'createYoutubeSummary youtubeUrl', method: 'POST', path: '/v1/youtube-summaries', body: () => ({ youtubeUrl: `https://www.youtube.com/watch?v=${NUL}` }), field: 'youtubeUrl' },
  { name: 'createNote, a member name', method: 'POST', path: '/v1/notes', body: ids => ({ ...note(ids), [`ti${NUL}tle`]: 'x' }), field: `ti${NUL}tle` },
  { name: 'createNote title, a lone surrogate', method: 'POST', path: '/v1/notes', body: ids => ({ ...note(ids), title: 'half an emoji \ud83d' }), field: 'title' },
  { name: 'updateFolder name, a lone low surrogate', method: 'PATCH', path: '/v1/folders/{folder}', body: () => ({ name: '\udc00 trail' }), field: 'name' },
]

/** Path ids holding a NUL, on every route with one. */
const pathCases: Case[] = [
  ['GET', '/v1/notes/%00'], ['PATCH', '/v1/notes/%00'], ['DELETE', '/v1/notes/%00'], ['GET', '/v1/notes/note_%00x/status'],
  ['GET', '/v1/notes/%00/transcript'], ['POST', '/v1/notes/%00/questions'], ['GET', '/v1/folders/%00'], ['PATCH', '/v1/folders/%00'],
  ['DELETE', '/v1/folders/fld_%00'], ['POST', '/v1/uploads/%00/complete'], ['DELETE', '/v1/webhooks/%00'], ['GET', '/v1/webhooks/%00/deliveries'],
  // routes outside the operations: the upload's PUT and the web library's media
  ['PUT', '/v1/uploads/%00/file?expires=1&signature=x'], ['GET', '/notes/%00/media'],
].map(([method, path]) => ({
  name: `${method} ${path}`,
  method: method!,
  path: path!,
  body: method === 'PATCH' ? () => (path!.includes('notes') ? { title: 'x' } : { name: 'x' }) : method === 'POST' && path!.endsWith('questions') ? () => ({ question: 'Why?' }) : undefined,
  field: 'id',
}))

/** Declared query parameters holding a NUL. */
const queryCases: Case[] = [
  ...['folderId', 'type', 'q', 'status', 'updatedAfter'].map(name => ({ name: `listNotes ?${name}`, method: 'GET', path: `/v1/notes?${name}=a%00b`, field: name })),
  { name: 'getNoteTranscript ?format', method: 'GET', path: '/v1/notes/{note}/transcript?format=%00', field: 'format' },
]

const CASES = [...bodyCases, ...pathCases, ...queryCases]

/** What two back ends must agree on: the status, the code and the fields `details` names. */
interface Answer {
  status: number
  code: string | undefined
  fields: string[]
}

const answerOf = (res: CallResult): Answer => ({ status: res.status, code: res.body?.error?.code, fields: (res.body?.error?.details ?? []).map((d: { field: string }) => d.field) })

async function appOn(store: Store) {
  const app = createTestApp({ store, env: { NOTESVC_RATE_LIMITS: 'read=100000,write=100000,processing=100000' } })
  const token = await app.key({ plan: 'pro' })
  const sandbox = await app.key({ email: 'sandbox@example.com', sandbox: true })
  const folder = await app.call('POST', '/v1/folders', { token, body: { name: 'Inbox' } })
  const created = await app.call('POST', '/v1/notes', { token, body: { title: 'Planning', content: 'The beta ships on March third.', folderId: folder.body.id } })
  expect([folder.status, created.status]).toEqual([201, 201])
  return { app, token, sandbox, ids: { noteId: created.body.id as string, folderId: folder.body.id as string } }
}

type Harness = Awaited<ReturnType<typeof appOn>>

function send(h: Harness, c: Case): Promise<CallResult> {
  const path = c.path.replace('{note}', h.ids.noteId).replace('{folder}', h.ids.folderId)
  return h.app.call(c.method, path, { token: h.token, body: c.body?.(h.ids) })
}

let rpcId = 0
/** A tool call over POST /mcp: the tool's result, or its error envelope as an Answer. */
async function callTool(h: Harness, name: string, args: Record<string, unknown>): Promise<Answer> {
  const message = { jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } }
  const headers = { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const res = await h.app.app.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }))
  const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: { error?: { code: string; details?: { field: string }[] } } } }
  const error = body.result?.isError ? body.result.structuredContent?.error : undefined
  return { status: res.status, code: error?.code, fields: (error?.details ?? []).map(d => d.field) }
}

/** POST /v1/audio/transcriptions with a sandbox key (no engine needed), a WAV and one text field. */
async function postForm(h: Harness, field: string, value: string): Promise<Answer> {
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(44)], { type: 'audio/wav' }), 'memo.wav')
  form.append(field, value)
  const res = await h.app.app.handle(new Request('http://localhost/v1/audio/transcriptions', { method: 'POST', body: form, headers: { authorization: `Bearer ${h.sandbox}` } }))
  return answerOf({ status: res.status, headers: res.headers, body: await res.json(), text: '' })
}

const answers: Record<string, Record<string, Answer>> = {}
const running = backEnds.filter(b => !b.skip)

for (const b of backEnds) {
  describe.skipIf(b.skip)(`text the database cannot hold, on ${b.name}`, () => {
    let store: Store
    let h: Harness
    beforeAll(async () => {
      store = await b.open()
      h = await appOn(store)
      answers[b.name] = {}
    }, 60_000)
    afterAll(async () => {
      await store?.close()
    })

    test('each NUL and lone surrogate of the table: 400 invalid_request naming the field, never a 500', async () => {
      const wrong: string[] = []
      for (const c of CASES) {
        const res = await send(h, c)
        const a = answerOf(res)
        answers[b.name]![c.name] = a
        if (a.status !== 400 || a.code !== 'invalid_request' || !a.fields.includes(c.field)) wrong.push(`${c.name}: ${res.status} ${res.text.slice(0, 160)}`)
      }
      expect(wrong).toEqual([])
    })

    test('MCP tool arguments and the OpenAI-compatible form are refused the same way', async () => {
      const mcp = {
        'mcp createNote title': await callTool(h, 'createNote', { title: `x${NUL}`, content: 'y' }),
        'mcp getNote id': await callTool(h, 'getNote', { id: NUL }),
        'mcp listNotes folderId': await callTool(h, 'listNotes', { folderId: `f${NUL}` }),
        'mcp updateFolder name': await callTool(h, 'updateFolder', { id: h.ids.folderId, name: 'half \ud800' }),
        'form prompt': await postForm(h, 'prompt', `context${NUL}`),
        'form model': await postForm(h, 'model', `whisper-1${NUL}`),
      }
      Object.assign(answers[b.name]!, mcp)
      expect(mcp).toEqual({
        'mcp createNote title': { status: 200, code: 'invalid_request', fields: ['title'] },
        'mcp getNote id': { status: 200, code: 'invalid_request', fields: ['id'] },
        'mcp listNotes folderId': { status: 200, code: 'invalid_request', fields: ['folderId'] },
        'mcp updateFolder name': { status: 200, code: 'invalid_request', fields: ['name'] },
        'form prompt': { status: 400, code: 'invalid_request', fields: ['prompt'] },
        'form model': { status: 400, code: 'invalid_request', fields: ['model'] },
      })
    })

    test('text PostgreSQL can hold is kept as sent: control characters, U+FFFD, an emoji, a query that merely looks like %00', async () => {
      const title = 'tab\there \u0001\u001f \ufffd 😀 %00'
      const created = await h.app.call('POST', '/v1/notes', { token: h.token, body: { title, content: `line\u0007 ${title}`, folderId: h.ids.folderId } })
      expect(created.status).toBe(201)
      const read = await h.app.call('GET', `/v1/notes/${created.body.id}`, { token: h.token })
      expect([read.body.title, read.body.summary]).toEqual([title, `line\u0007 ${title}`])
      const listed = await h.app.call('GET', `/v1/notes?type=${encodeURIComponent('%00')}`, { token: h.token })
      expect(listed.status).toBe(200)
      // an undeclared query parameter is never read, so it is not refused; nor is health's detail
      expect((await h.app.call('GET', `/v1/folders?stray=%00`, { token: h.token })).status).toBe(200)
      expect((await h.app.call('GET', '/v1/health?detail=%00')).status).toBe(200)
    })
  })
}

describe.skipIf(running.length < 2)('the two back ends', () => {
  test('give the same status, code and fields for every case', () => {
    expect(answers.postgres).toEqual(answers.sqlite!)
    expect(Object.keys(answers.sqlite ?? {}).length).toBe(CASES.length + 6)
  })
})
