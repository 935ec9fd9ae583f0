import { describe, expect, test } from 'bun:test'
import { ALL_SCOPES, OPERATIONS, type Operation } from '../../src/http/operations'
import { createTestApp, type CallResult } from '../helpers/app'

/**
 * Authentication and scopes, driven by the operations table: an operation added to OPERATIONS is
 * covered here without touching this file (SPEC "Authentication" 3, 6, 7).
 */

const PLACEHOLDER_ID = 'note_missing'
const protectedOps = OPERATIONS.filter(o => !o.public)
const publicOps = OPERATIONS.filter(o => o.public)

const pathOf = (op: Operation) => op.path.replace(/:[A-Za-z]+/g, PLACEHOLDER_ID)
const hasBody = (op: Operation) => op.method === 'POST' || op.method === 'PATCH'
const label = (op: Operation) => `${op.id} (${op.method} ${op.path})`

/** A key with its id, so a test can revoke exactly that key. */
function keyWithId(app: ReturnType<typeof createTestApp>, o: { scopes?: (typeof ALL_SCOPES)[number][]; sandbox?: boolean } = {}) {
  const { key, info } = app.services.accounts.createKey({ email: 'auth@example.com', ...o })
  return { token: key, id: info.id }
}

function callOp(app: ReturnType<typeof createTestApp>, op: Operation, o: { token?: string; headers?: Record<string, string> } = {}) {
  return app.call(op.method, pathOf(op), { ...o, body: hasBody(op) ? {} : undefined })
}

function expectEnvelope(res: CallResult, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.body?.error?.code).toBe(code)
  expect(res.body.error.type).toBe('invalid_request_error')
  expect(typeof res.body.error.message).toBe('string')
  expect(res.body.error.message.length).toBeGreaterThan(0)
  expect(res.body.error.doc_url).toEndWith(`/errors#${code}`)
  const requestId = res.headers.get('x-request-id')
  expect(requestId).toBeTruthy()
  expect(res.body.error.request_id).toBe(requestId!)
}

test('the operations table has protected operations to check', () => {
  // Guards the table-driven tests below against silently running over an empty list.
  expect(protectedOps.length).toBeGreaterThanOrEqual(19)
  expect(publicOps.map(o => `${o.method} ${o.path}`).sort()).toEqual(['GET /v1', 'GET /v1/health'])
})

test('every operation of the table is a route the app serves', () => {
  const { app } = createTestApp()
  const served = new Set(app.routes.map(r => `${r.method} ${r.path}`))
  const missing = OPERATIONS.filter(o => !served.has(`${o.method} ${o.path}`)).map(label)
  expect(missing).toEqual([])
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
  const revoked = keyWithId(app)
  app.services.accounts.revokeKey(revoked.id)

  const credentials: [string, Record<string, string>][] = [
    ['live prefix with random garbage', { authorization: `Bearer svc_live_${crypto.randomUUID().replaceAll('-', '')}` }],
    ['sandbox prefix with random garbage', { authorization: `Bearer svc_test_${crypto.randomUUID().replaceAll('-', '')}` }],
    ['a string that is not a key', { authorization: 'Bearer not-a-key-at-all' }],
    ['a revoked key', { authorization: `Bearer ${revoked.token}` }],
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
    const token = app.key({ scopes: ALL_SCOPES.filter(s => s !== scope) })
    const res = await callOp(app, op, { token })
    expectEnvelope(res, 403, 'insufficient_scope')
    expect(res.body.error.message).toContain(scope)
  })
})

describe('a key with exactly the needed scopes is admitted', () => {
  const app = createTestApp()
  test.each(protectedOps.map(op => [`${label(op)} with ${op.scopes.join(' + ')}`, op] as const))('%s', async (_name, op) => {
    const token = app.key({ scopes: op.scopes })
    const res = await callOp(app, op, { token })
    // A placeholder id and an empty body may be refused (400, 404...), but never as a credential problem.
    expect(res.status).not.toBe(401)
    expect(res.status).not.toBe(403)
    expect(res.status).toBeLessThan(500)
    expect(['invalid_token', 'insufficient_scope']).not.toContain(res.body?.error?.code)
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
  const { token, id } = keyWithId(app)
  const before = await app.call('GET', '/v1/notes', { token })
  expect(before.status).toBe(200)

  app.services.accounts.revokeKey(id)

  const after = await app.call('GET', '/v1/notes', { token })
  expectEnvelope(after, 401, 'invalid_token')
  // Other keys of the same account keep working.
  const other = keyWithId(app)
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
    const { token, id } = keyWithId(app)
    app.services.accounts.revokeKey(id)
    const res = await app.call('POST', '/v1/notes', { token, body: { title: 42 } })
    expectEnvelope(res, 401, 'invalid_token')
  })
})
