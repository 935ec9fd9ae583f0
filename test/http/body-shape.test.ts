/**
 * A body's shape bounded before it is parsed or validated (src/http/body-shape.ts): nested deeper than
 * 32 levels, or holding more than 10,000 elements and members, or a form of more than 100 fields, is
 * refused with 400 `invalid_request` naming the limit, on every route that reads a body: every JSON
 * operation of the served OpenAPI document, MCP, OAuth's registration and token endpoints, and the
 * pages' forms. Issue 29 finding 1: 20,000 levels answered 400 after seconds (the validation error
 * printed the value), 40,000 a 500 (the stack overflowed).
 */
import { describe, expect, test } from 'bun:test'
import { formShapeIssue, jsonShapeIssue, multipartShapeIssue } from '../../src/http/body-shape'
import { createTestApp, expectEnvelope, type CallResult } from '../helpers/app'

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
/** An object whose member `field` is `depth - 1` arrays deep, so the whole body is `depth` levels. */
const deepField = (field: string, depth: number) => `{"${field}":${nested(depth - 1)}}`
const manyItems = (n: number) => `[${Array(n).fill('0').join(',')}]`

describe('the shape of a JSON text, read without parsing it', () => {
  const cases: [string, string, string | null][] = [
    ['32 levels', nested(32), null],
    ['33 levels', nested(33), 'too_deep'],
    ['20,000 levels', nested(20_000), 'too_deep'],
    ['32 levels of objects', '{"a":'.repeat(31) + '{}' + '}'.repeat(31), null],
    ['33 levels of objects', '{"a":'.repeat(32) + '{}' + '}'.repeat(32), 'too_deep'],
    ['brackets inside a string are text', `{"title":"${'['.repeat(100)}"}`, null],
    ['an escaped quote does not end the string', `{"t":"a\\"${'['.repeat(100)}"}`, null],
    ['an escaped backslash before the quote does end it', `{"t":"a\\\\",${'"x":['.repeat(40)}`, 'too_deep'],
    ['10,000 elements', manyItems(10_000), null],
    ['10,001 elements', manyItems(10_001), 'too_many_items'],
    ['10,001 members', `{${Array.from({ length: 10_001 }, (_, i) => `"k${i}":1`).join(',')}}`, 'too_many_items'],
    ['commas inside strings are text', `["${','.repeat(20_000)}"]`, null],
    ['an unterminated string is left to JSON.parse', '{"a":"[[[[', null],
    ['not JSON at all is left to JSON.parse', 'hello', null],
  ]
  for (const [name, text, issue] of cases) test(name, () => expect(jsonShapeIssue(text)).toBe(issue as never))
})

describe('the fields of a form, counted before it is parsed', () => {
  const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i}=x`).join('&')
  test('urlencoded: 100 fields pass, 101 do not', () => {
    expect(formShapeIssue(fields(100))).toBeNull()
    expect(formShapeIssue(fields(101))).toBe('too_many_fields')
  })
  test('multipart: 100 parts pass, 101 do not', () => {
    const body = (n: number) => new TextEncoder().encode(Array.from({ length: n }, (_, i) => `--B\r\ncontent-disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('') + '--B--\r\n')
    expect(multipartShapeIssue(body(100), 'B')).toBeNull()
    expect(multipartShapeIssue(body(101), 'B')).toBe('too_many_fields')
  })
})

/** The served document's JSON operations: method, path with its parameters filled, and a valid body. */
async function jsonOperations(t: ReturnType<typeof createTestApp>): Promise<{ method: string; path: string }[]> {
  const doc = (await t.call('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>> }
  const ops: { method: string; path: string }[] = []
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.requestBody?.content?.['application/json']) ops.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'x_1') })
    }
  }
  return ops
}

function expectRefused(res: CallResult, limit: string) {
  expectEnvelope(res, 400, 'invalid_request')
  expect(res.body.error.message).toContain(limit)
}

describe('every JSON operation', () => {
  test('a body past the depth or item limit: 400 naming the limit, before validation, whatever the schema', async () => {
    const t = createTestApp({ env: { NOTESVC_RATE_LIMITS: 'read=10000,write=10000,processing=10000' } })
    const token = await t.key()
    const ops = await jsonOperations(t)
    expect(ops.length).toBeGreaterThan(10)
    const wrong: string[] = []
    for (const { method, path } of ops) {
      for (const [body, limit] of [[nested(20_000), '32 levels'], [nested(40_000), '32 levels'], [deepField('title', 33), '32 levels'], [manyItems(10_001), '10000']] as const) {
        const res = await t.call(method, path, { token, body })
        if (res.status !== 400 || res.body?.error?.code !== 'invalid_request' || !res.body.error.message.includes(limit)) wrong.push(`${method} ${path} (${body.length} bytes): ${res.status} ${res.text.slice(0, 120)}`)
      }
    }
    expect(wrong).toEqual([])
  })

  test('the refusal is the envelope, and a caller without a credential is told that first', async () => {
    const t = createTestApp()
    const token = await t.key()
    const refused = await t.call('POST', '/v1/folders', { token, body: nested(20_000) })
    expectRefused(refused, 'more than 32 levels deep')
    expect(refused.body.error.message).toContain('send a flatter body')
    expectEnvelope(await t.call('POST', '/v1/folders', { body: nested(20_000) }), 401, 'invalid_token')
  })

  test('within the limits, a body is validated as before: the fields at fault, not the value', async () => {
    const t = createTestApp()
    const token = await t.key()
    const res = await t.call('POST', '/v1/folders', { token, body: deepField('name', 32) })
    expectEnvelope(res, 400, 'invalid_request')
    expect(res.body.error.details).toEqual([{ field: 'name', issue: expect.any(String) }])
    expect(res.text).not.toContain('[[')
    expect((await t.call('POST', '/v1/folders', { token, body: { name: 'Inbox' } })).status).toBe(201)
  })
})

describe('the routes that read their own bodies', () => {
  test('MCP: 400 with the envelope in the JSON-RPC error, before the SDK reads the message', async () => {
    const t = createTestApp()
    const token = await t.key()
    const message = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"createFolder","arguments":{"name":${nested(20_000)}}}}`
    const res = await t.app.handle(new Request('http://localhost/mcp', {
      method: 'POST', body: message,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    }))
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { code: number; message: string; data: { error: { code: string; message: string } } } }
    expect(body.error.code).toBe(-32600)
    expect(body.error.message).toContain('more than 32 levels deep')
    expect(body.error.data.error).toMatchObject({ code: 'invalid_request', message: body.error.message })
  })

  test('OAuth: a registration nested too deep, a token request of too many fields: 400 invalid_request', async () => {
    const t = createTestApp()
    const register = await t.app.handle(new Request('http://localhost/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"redirect_uris":${nested(20_000)}}` }))
    expect(register.status).toBe(400)
    expect(await register.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('more than 32 levels deep') })
    const form = Array.from({ length: 101 }, (_, i) => `f${i}=x`).join('&')
    const token = await t.app.handle(new Request('http://localhost/oauth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form }))
    expect(token.status).toBe(400)
    expect(await token.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('more than 100 fields') })
  })

  test('the pages’ forms, urlencoded and multipart: 400 envelope naming the limit', async () => {
    const t = createTestApp()
    const fields = Array.from({ length: 101 }, (_, i) => [`f${i}`, 'x'])
    const urlencoded = await t.app.handle(new Request('http://localhost/signin', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost' }, body: new URLSearchParams(fields).toString() }))
    // as a browser sends it: its parts between boundaries, its length declared
    const multipartBody = fields.map(([k, v]) => `--B0undary\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') + '--B0undary--\r\n'
    const multipart = await t.app.handle(new Request('http://localhost/signin', {
      method: 'POST', body: multipartBody,
      headers: { origin: 'http://localhost', 'content-type': 'multipart/form-data; boundary=B0undary', 'content-length': String(Buffer.byteLength(multipartBody)) },
    }))
    for (const res of [urlencoded, multipart]) {
      const text = await res.text()
      expectRefused({ status: res.status, headers: res.headers, text, body: JSON.parse(text) }, 'more than 100 fields')
    }
  })
})
