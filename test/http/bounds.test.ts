import { describe, expect, test } from 'bun:test'
import { createTestApp, type CallResult } from '../helpers/app'

/**
 * SPEC "Size and value bounds", each bound from both sides: the edge value is accepted, one past it is
 * refused naming the field. Every test builds its own app, so rate limits never interfere.
 */

const GiB = 1024 ** 3
const MAX_UPLOAD_BYTES = 5 * GiB
const s = (n: number) => 'x'.repeat(n)

interface Ctx {
  call: ReturnType<typeof createTestApp>['call']
  live: string
  sandbox: string
  noteId: string
  sandboxNoteId: string
  folderId: string
}

async function setup(): Promise<Ctx> {
  const app = createTestApp()
  const live = await app.key()
  const sandbox = await app.key({ sandbox: true })
  const note = await app.call('POST', '/v1/notes', { token: live, body: { title: 'Live note', content: 'The beta ships on March third.' } })
  const sandboxNote = await app.call('POST', '/v1/notes', { token: sandbox, body: { title: 'Sandbox note', content: 'The beta ships on March third.' } })
  const folder = await app.call('POST', '/v1/folders', { token: live, body: { name: 'Inbox' } })
  expect([note.status, sandboxNote.status, folder.status]).toEqual([201, 201, 201])
  return { call: app.call, live, sandbox, noteId: note.body.id, sandboxNoteId: sandboxNote.body.id, folderId: folder.body.id }
}

interface Request {
  method: string
  path: string
  body?: unknown
  sandbox?: boolean
}

interface Bound {
  /** what is bounded, and by which operation */
  name: string
  /** the field `details` must name when the bound is crossed */
  field: string
  request: (value: any, ctx: Ctx) => Request
  /** values on the allowed side of the edge, and the success status each gets */
  allowed: { value: any; status: number; label: string }[]
  /** values one past the edge, and the refusal each gets */
  refused: { value: any; status: number; code: string; label: string }[]
  /** optional check on the success body */
  check?: (res: CallResult, value: any) => void
}

const send = (ctx: Ctx, r: Request) => ctx.call(r.method, r.path, { token: r.sandbox ? ctx.sandbox : ctx.live, body: r.body })
const tooBig = (value: any, label: string) => ({ value, status: 400, code: 'invalid_request', label })

const BOUNDS: Bound[] = [
  {
    name: 'note title (createNote)',
    field: 'title',
    request: v => ({ method: 'POST', path: '/v1/notes', body: { title: v, content: 'body' } }),
    allowed: [{ value: s(500), status: 201, label: '500 characters' }],
    refused: [tooBig(s(501), '501 characters')],
    check: (res, v) => expect(res.body.title).toBe(v),
  },
  {
    name: 'note title (updateNote)',
    field: 'title',
    request: (v, c) => ({ method: 'PATCH', path: `/v1/notes/${c.noteId}`, body: { title: v } }),
    allowed: [{ value: s(500), status: 200, label: '500 characters' }],
    refused: [tooBig(s(501), '501 characters')],
    check: (res, v) => expect(res.body.title).toBe(v),
  },
  {
    name: 'upload fileName (createUpload)',
    field: 'fileName',
    request: v => ({ method: 'POST', path: '/v1/uploads', body: { fileName: v, contentType: 'audio/mpeg' } }),
    allowed: [{ value: s(496) + '.mp3', status: 201, label: '500 characters' }],
    refused: [tooBig(s(497) + '.mp3', '501 characters')],
  },
  {
    name: 'upload fileSize (createUpload)',
    field: 'fileSize',
    request: v => ({ method: 'POST', path: '/v1/uploads', body: { fileName: 'talk.mp3', contentType: 'audio/mpeg', fileSize: v } }),
    allowed: [{ value: MAX_UPLOAD_BYTES, status: 201, label: '5 GiB exactly' }],
    refused: [{ value: MAX_UPLOAD_BYTES + 1, status: 413, code: 'payload_too_large', label: '5 GiB + 1 byte' }],
  },
  {
    name: 'folder name (createFolder)',
    field: 'name',
    request: v => ({ method: 'POST', path: '/v1/folders', body: { name: v } }),
    allowed: [{ value: s(200), status: 201, label: '200 characters' }],
    refused: [tooBig(s(201), '201 characters')],
    check: (res, v) => expect(res.body.name).toBe(v),
  },
  {
    name: 'folder name (updateFolder)',
    field: 'name',
    request: (v, c) => ({ method: 'PATCH', path: `/v1/folders/${c.folderId}`, body: { name: v } }),
    allowed: [{ value: s(200), status: 200, label: '200 characters' }],
    refused: [tooBig(s(201), '201 characters')],
    check: (res, v) => expect(res.body.name).toBe(v),
  },
  {
    name: 'folder color (createFolder)',
    field: 'color',
    request: v => ({ method: 'POST', path: '/v1/folders', body: { name: 'Work', color: v } }),
    allowed: [{ value: s(50), status: 201, label: '50 characters' }],
    refused: [tooBig(s(51), '51 characters')],
    check: (res, v) => expect(res.body.color).toBe(v),
  },
  {
    name: 'folder color (updateFolder)',
    field: 'color',
    request: (v, c) => ({ method: 'PATCH', path: `/v1/folders/${c.folderId}`, body: { color: v } }),
    allowed: [{ value: s(50), status: 200, label: '50 characters' }],
    refused: [tooBig(s(51), '51 characters')],
    check: (res, v) => expect(res.body.color).toBe(v),
  },
  {
    name: 'question (askNoteQuestion, sandbox)',
    field: 'question',
    request: (v, c) => ({ method: 'POST', path: `/v1/notes/${c.sandboxNoteId}/questions`, body: { question: v }, sandbox: true }),
    allowed: [{ value: s(2000), status: 200, label: '2000 characters' }],
    refused: [tooBig(s(2001), '2001 characters')],
    check: (res, v) => expect(res.body.question).toBe(v),
  },
  {
    name: 'text to summarize (createSummary, sandbox)',
    field: 'text',
    request: v => ({ method: 'POST', path: '/v1/summaries', body: { text: v }, sandbox: true }),
    allowed: [{ value: s(500_000), status: 200, label: '500000 characters' }],
    refused: [tooBig(s(500_001), '500001 characters')],
  },
  {
    name: 'transcription timeoutSeconds (createTranscription, sandbox)',
    field: 'timeoutSeconds',
    request: v => ({ method: 'POST', path: '/v1/transcriptions', body: { audioUrl: 'https://example.com/a.mp3', timeoutSeconds: v }, sandbox: true }),
    allowed: [
      { value: 30, status: 200, label: '30 (minimum)' },
      { value: 1800, status: 200, label: '1800 (maximum)' },
    ],
    refused: [tooBig(29, '29'), tooBig(1801, '1801')],
  },
  {
    name: 'note list limit (listNotes)',
    field: 'limit',
    request: v => ({ method: 'GET', path: `/v1/notes?limit=${v}` }),
    allowed: [
      { value: 1, status: 200, label: '1 (minimum)' },
      { value: 100, status: 200, label: '100 (maximum)' },
    ],
    refused: [tooBig(0, '0'), tooBig(101, '101')],
    check: (res, v) => {
      expect(res.body.pagination.limit).toBe(v)
      expect(res.body.data.length).toBeLessThanOrEqual(v)
    },
  },
  {
    name: 'note list offset (listNotes)',
    field: 'offset',
    request: v => ({ method: 'GET', path: `/v1/notes?offset=${v}` }),
    allowed: [{ value: 0, status: 200, label: '0 (minimum)' }],
    refused: [tooBig(-1, '-1')],
    check: (res, v) => expect(res.body.pagination.offset).toBe(v),
  },
  {
    name: 'usage recent charges limit (getUsage)',
    field: 'limit',
    request: v => ({ method: 'GET', path: `/v1/usage?limit=${v}` }),
    allowed: [
      { value: 1, status: 200, label: '1 (minimum)' },
      { value: 100, status: 200, label: '100 (maximum)' },
    ],
    refused: [tooBig(0, '0'), tooBig(101, '101')],
    check: res => expect(Array.isArray(res.body.recent)).toBe(true),
  },
]

describe('bounds: the allowed edge succeeds', () => {
  const rows = BOUNDS.flatMap(b => b.allowed.map(a => [`${b.name}: ${a.label} → ${a.status}`, b, a] as const))
  test.each(rows)('%s', async (_name, bound, allowed) => {
    const ctx = await setup()
    const res = await send(ctx, bound.request(allowed.value, ctx))
    expect(res.body?.error).toBeUndefined()
    expect(res.status).toBe(allowed.status)
    bound.check?.(res, allowed.value)
  })
})

describe('bounds: one past the edge is refused naming the field', () => {
  const rows = BOUNDS.flatMap(b => b.refused.map(r => [`${b.name}: ${r.label} → ${r.status} ${r.code}`, b, r] as const))
  test.each(rows)('%s', async (_name, bound, refused) => {
    const ctx = await setup()
    const res = await send(ctx, bound.request(refused.value, ctx))
    expect(res.status).toBe(refused.status)
    expect(res.body.error.code).toBe(refused.code)
    expect(res.body.error.details).toBeArray()
    const detail = res.body.error.details.find((d: { field: string }) => d.field === bound.field)
    expect(detail).toBeDefined()
    expect(detail.issue.length).toBeGreaterThan(0)
  })
})

describe('other value rules', () => {
  test('createUpload with contentType application/pdf → 415 unsupported_media_type', async () => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'POST', path: '/v1/uploads', body: { fileName: 'paper.pdf', contentType: 'application/pdf' } })
    expect(res.status).toBe(415)
    expect(res.body.error.code).toBe('unsupported_media_type')
  })

  test.each(['audio/mpeg', 'audio/wav', 'video/mp4'])('createUpload with contentType %s → 201', async contentType => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'POST', path: '/v1/uploads', body: { fileName: 'talk', contentType } })
    expect(res.status).toBe(201)
    expect(res.body.contentType).toBe(contentType)
  })

  const emptyPatches = [
    ['UpdateNoteRequest {} (updateNote)', (c: Ctx) => `/v1/notes/${c.noteId}`],
    ['UpdateFolderRequest {} (updateFolder)', (c: Ctx) => `/v1/folders/${c.folderId}`],
  ] as const
  test.each(emptyPatches)('%s → 400 invalid_request (at least one property)', async (_name, path) => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'PATCH', path: path(ctx), body: {} })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
  })

  const badQueries = [
    ['status=Bogus', 'status'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['offset=abc', 'offset'],
    ['updatedAfter=notadate', 'updatedAfter'],
  ] as const
  test.each(badQueries)('listNotes ?%s → 400 invalid_request naming %s', async (query, field) => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'GET', path: `/v1/notes?${query}` })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field)
  })

  // The field at fault is named even when a valid parameter carries the same value.
  const sameValue = [
    ['offset=0&limit=0', 'limit', 'offset'],
    ['offset=101&limit=101', 'limit', 'offset'],
    ['type=-1&offset=-1', 'offset', 'type'],
  ] as const
  test.each(sameValue)('listNotes ?%s → 400 naming %s, not %s', async (query, field, valid) => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'GET', path: `/v1/notes?${query}` })
    expect(res.status).toBe(400)
    const fields = res.body.error.details.map((d: { field: string }) => d.field)
    expect(fields).toContain(field)
    expect(fields).not.toContain(valid)
  })

  test.each(['Done', 'Summarizing', 'Error'])('listNotes ?status=%s → 200', async status => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'GET', path: `/v1/notes?status=${status}` })
    expect(res.status).toBe(200)
    expect(res.body.data.every((n: { status: string }) => n.status === status)).toBe(true)
  })

  test('listNotes ?updatedAfter=<ISO date-time> → 200', async () => {
    const ctx = await setup()
    const res = await send(ctx, { method: 'GET', path: '/v1/notes?updatedAfter=2020-01-01T00:00:00Z' })
    expect(res.status).toBe(200)
    expect(res.body.data.length).toBeGreaterThan(0)
  })
})
