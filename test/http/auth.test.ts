import { beforeAll, describe, expect, test } from 'bun:test'
import { createTestApp, expectEnvelope } from '../helpers/app'
import { EVERY_SCOPE, SPEC_OPERATIONS, type SpecOperation, type SpecScope } from '../helpers/interface'

/**
 * Authentication and scopes, driven by SPEC.md's Endpoints tables written down as data in
 * test/helpers/interface.ts (SPEC "Authentication" 3, 6, 7): the expected scopes never come from the
 * table the app enforces, so a wrong scope there fails here.
 */

const PLACEHOLDER_ID = 'note_missing'
const protectedOps = SPEC_OPERATIONS.filter(o => o.scopes.length > 0)
const publicOps = SPEC_OPERATIONS.filter(o => o.scopes.length === 0)

const pathOf = (op: SpecOperation) => op.path.replace(/\{[A-Za-z]+\}/g, PLACEHOLDER_ID)
const hasBody = (op: SpecOperation) => op.method === 'POST' || op.method === 'PATCH'
const label = (op: SpecOperation) => `${op.id} (${op.method} ${op.path})`

/**
 * What each operation answers to a key with exactly its scopes, the placeholder id and an empty body
 * (`{}` for POST and PATCH): past admission, the request itself is refused or served as the interface
 * says. Statuses from SPEC.md: reads of a missing id are 404, a body missing its required fields (or
 * an update with no field) is 400, lists and usage are 200.
 */
const ADMITTED: Record<string, { status: number; code?: string }> = {
  listNotes: { status: 200 },
  createNote: { status: 400, code: 'invalid_request' },
  getNote: { status: 404, code: 'not_found' },
  updateNote: { status: 400, code: 'invalid_request' },
  deleteNote: { status: 404, code: 'not_found' },
  getNoteStatus: { status: 404, code: 'not_found' },
  getNoteTranscript: { status: 404, code: 'not_found' },
  askNoteQuestion: { status: 400, code: 'invalid_request' },
  listFolders: { status: 200 },
  createFolder: { status: 400, code: 'invalid_request' },
  getFolder: { status: 404, code: 'not_found' },
  updateFolder: { status: 400, code: 'invalid_request' },
  deleteFolder: { status: 404, code: 'not_found' },
  createUpload: { status: 400, code: 'invalid_request' },
  completeUpload: { status: 404, code: 'not_found' },
  createTranscription: { status: 400, code: 'invalid_request' },
  createSummary: { status: 400, code: 'invalid_request' },
  createYoutubeSummary: { status: 400, code: 'invalid_request' },
  getUsage: { status: 200 },
}

/** A key with its id, so a test can revoke exactly that key. */
async function keyWithId(app: ReturnType<typeof createTestApp>, o: { scopes?: SpecScope[]; sandbox?: boolean } = {}) {
  const { key, info } = await app.services.accounts.createKey({ email: 'auth@example.com', ...o })
  return { token: key, id: info.id }
}

function callOp(app: ReturnType<typeof createTestApp>, op: SpecOperation, o: { token?: string; headers?: Record<string, string> } = {}) {
  return app.call(op.method, pathOf(op), { ...o, body: hasBody(op) ? {} : undefined })
}

test('every operation of the SPEC is a route the app serves', () => {
  const { app } = createTestApp()
  const served = new Set(app.routes.map(r => `${r.method} ${r.path}`))
  const elysiaPath = (op: SpecOperation) => op.path.replace(/\{([A-Za-z]+)\}/g, ':$1')
  const missing = SPEC_OPERATIONS.filter(o => !served.has(`${o.method} ${elysiaPath(o)}`)).map(label)
  expect(missing).toEqual([])
  expect(Object.keys(ADMITTED).sort()).toEqual(protectedOps.map(o => o.id).sort())
})

describe('no credential → 401 invalid_token', () => {
  const app = createTestApp()
  test.each(protectedOps.map(op => [label(op), op] as const))('%s', async (_name, op) => {
    const res = await callOp(app, op)
    expectEnvelope(res, 401, 'invalid_token')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
  })
})

describe('bad credential → 401 invalid_token', () => {
  const app = createTestApp()
  const revoked = { token: '' }
  beforeAll(async () => {
    const k = await keyWithId(app)
    await app.services.accounts.revokeKey(k.id)
    revoked.token = k.token
  })

  const credentials: [string, Record<string, string>][] = [
    ['live prefix with random garbage', { authorization: `Bearer svc_live_${crypto.randomUUID().replaceAll('-', '')}` }],
    ['sandbox prefix with random garbage', { authorization: `Bearer svc_test_${crypto.randomUUID().replaceAll('-', '')}` }],
    ['a string that is not a key', { authorization: 'Bearer not-a-key-at-all' }],
    ['a revoked key', { get authorization() { return `Bearer ${revoked.token}` } }],
    ['a key under the Basic scheme', { authorization: `Basic ${btoa('user:pass')}` }],
  ]
  const rows = protectedOps.flatMap(op => credentials.map(([what, headers]) => [`${label(op)} with ${what}`, op, headers] as const))

  test.each(rows)('%s', async (_name, op, headers) => {
    const res = await callOp(app, op, { headers })
    expectEnvelope(res, 401, 'invalid_token')
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
  })
})

describe('a key lacking one needed scope → 403 insufficient_scope', () => {
  const app = createTestApp()
  const rows = protectedOps.flatMap(op => op.scopes.map(scope => [`${label(op)} without ${scope}`, op, scope] as const))

  test.each(rows)('%s', async (_name, op, scope) => {
    const token = await app.key({ scopes: EVERY_SCOPE.filter(s => s !== scope) })
    const res = await callOp(app, op, { token })
    expectEnvelope(res, 403, 'insufficient_scope')
    expect(res.body.error.message).toContain(scope)
  })
})

describe('a key with exactly the needed scopes is admitted', () => {
  const app = createTestApp()
  test.each(protectedOps.map(op => [`${label(op)} with ${op.scopes.join(' + ')}`, op] as const))('%s', async (_name, op) => {
    const token = await app.key({ scopes: op.scopes })
    const res = await callOp(app, op, { token })
    // A placeholder id and an empty body are refused as the interface says, never as a credential problem.
    const want = ADMITTED[op.id]!
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: want.status, code: want.code })
  })
})

describe('public operations need no credential', () => {
  const app = createTestApp()
  test.each(publicOps.map(op => [label(op), op] as const))('%s answers 200 without Authorization', async (_name, op) => {
    const res = await app.call(op.method, op.path)
    expect(res.status).toBe(200)
    expect(typeof res.body.version).toBe('string')
  })
  test.each(publicOps.map(op => [label(op), op] as const))('%s answers 200 even with a bad credential', async (_name, op) => {
    const res = await app.call(op.method, op.path, { token: 'svc_live_doesnotexist' })
    expect(res.status).toBe(200)
  })
})

test('a revoked key is refused immediately after revocation', async () => {
  const app = createTestApp()
  const { token, id } = await keyWithId(app)
  const before = await app.call('GET', '/v1/notes', { token })
  expect(before.status).toBe(200)

  await app.services.accounts.revokeKey(id)

  const after = await app.call('GET', '/v1/notes', { token })
  expectEnvelope(after, 401, 'invalid_token')
  // Other keys of the same account keep working.
  const other = await keyWithId(app)
  expect((await app.call('GET', '/v1/notes', { token: other.token })).status).toBe(200)
})

describe('authentication comes before body validation', () => {
  const app = createTestApp()
  const bodyOps = protectedOps.filter(hasBody)

  test.each(bodyOps.map(op => [label(op), op] as const))('%s with a body that fails validation and no credential → 401', async (_name, op) => {
    const res = await app.call(op.method, pathOf(op), { body: { unexpectedField: 12, title: 42 } })
    expectEnvelope(res, 401, 'invalid_token')
  })

  test.each(bodyOps.map(op => [label(op), op] as const))('%s with a body that is not JSON and no credential → 401', async (_name, op) => {
    const res = await app.call(op.method, pathOf(op), { body: '{"title": ', headers: { 'content-type': 'application/json' } })
    expectEnvelope(res, 401, 'invalid_token')
  })

  test('POST /v1/notes with an invalid body and a revoked key → 401, not 400', async () => {
    const { token, id } = await keyWithId(app)
    await app.services.accounts.revokeKey(id)
    const res = await app.call('POST', '/v1/notes', { token, body: { title: 42 } })
    expectEnvelope(res, 401, 'invalid_token')
  })
})
