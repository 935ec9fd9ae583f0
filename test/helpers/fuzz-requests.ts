/**
 * Requests generated from a served OpenAPI document: each operation's method and path, its path and
 * query parameters and its body (JSON or multipart form) built from the schemas by fuzz-schema.ts,
 * with a credential (a live key, a sandbox key, a key lacking scopes, a bogus key or none), real ids
 * of the caller's notes, folders, webhooks and speaker profiles (and another account's) beside
 * generated ones, and a count of times to send it in a row (so the paths that answer a repeated
 * request from memory are exercised: issue 29's finding 2 was the second `GET /v1/notes?speaker=A`).
 */
import fc from 'fast-check'
import { fieldValue, hostileJsonBody, hostileValue, jsonText, RawJson, resolve, validValue, type Known, type OpenApiDocument, type Schema, type SchemaContext } from './fuzz-schema'

export interface Operation {
  id: string
  method: string
  /** the path template, `/v1/notes/{id}` */
  path: string
  params: { in: 'path' | 'query'; name: string; schema: Schema }[]
  body?: { kind: 'json' | 'form'; schema: Schema }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

/** Every operation of the document. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, op]) => {
      const content = op.requestBody?.content ?? {}
      const kind = content['application/json'] ? 'json' : content['multipart/form-data'] ? 'form' : undefined
      return {
        id: op.operationId as string,
        method: method.toUpperCase(),
        path,
        params: ((op.parameters ?? []) as any[]).filter(p => p.in === 'path' || p.in === 'query').map(p => ({ in: p.in, name: p.name, schema: p.schema ?? {} })),
        body: kind ? { kind, schema: (content['application/json'] ?? content['multipart/form-data']).schema } : undefined,
      } satisfies Operation
    }))
}

export type Auth = 'live' | 'sandbox' | 'scoped' | 'bogus' | 'none'

/**
 * What exists on the server, per library (the live one, which the under-scoped key also reads, and the
 * sandbox one): for path parameters the ids of each collection (`notes`, `folders`, `webhooks`,
 * `speakers`; `speakerId` and `index` by their names) and those a DELETE may take (`notes:delete`, …),
 * and values known by field name (fuzz-schema.ts Known); `others`: ids of another account's notes
 * and folders (each must be a 404).
 */
export interface Libraries {
  live: Known
  sandbox: Known
  others: string[]
}

type FormEntry = [name: string, value: string | RawJson | { file: Uint8Array; type: string }]
export type FuzzBody = { contentType?: string; json: unknown } | { form: FormEntry[] }

export interface FuzzRequest {
  operation: string
  method: string
  /** the path and query as sent (percent-encoded) */
  url: string
  auth: Auth
  body?: FuzzBody
  /** how many times in a row it is sent */
  repeat: number
}

/**
 * Bun answers a request head over about 12 KB with a bare 431 before the application sees it (no
 * envelope can be given there): each URL value is cut at 2,000 characters and the query at 6,000.
 */
const MAX_URL_VALUE = 2_000
const MAX_QUERY = 6_000

/** encodeURIComponent, except that a lone surrogate is written as the three bytes a careless encoder writes (%ED%A0%80), where encodeURIComponent throws. */
function percentEncode(s: string): string {
  let out = ''
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      out += encodeURIComponent(s.slice(i, i + 2))
      i++
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map(b => `%${b.toString(16).toUpperCase()}`).join('')
    } else {
      out += encodeURIComponent(s[i]!)
    }
    if (out.length > MAX_URL_VALUE) return out.slice(0, MAX_URL_VALUE)
  }
  return out
}

/** A generated value as URL text: strings encoded, RawJson as it is, other JSON values as their JSON. */
function urlText(v: unknown): string {
  if (v instanceof RawJson) return v.text.length > MAX_URL_VALUE ? v.text.slice(0, MAX_URL_VALUE) : v.text
  return percentEncode(typeof v === 'string' ? v : jsonText(v))
}

/** Query pairs for one parameter's value: an array repeats the name, an object uses brackets (`a[b]=1`). */
function queryPairs(name: string, v: unknown): string[] {
  if (Array.isArray(v)) return v.length ? v.map(x => `${name}=${urlText(x)}`) : [`${name}[]=`]
  if (v !== null && typeof v === 'object' && !(v instanceof RawJson)) return Object.entries(v).map(([k, x]) => `${name}[${percentEncode(k)}]=${urlText(x)}`)
  return [`${name}=${urlText(v)}`]
}

/** Segments no encoder writes but a client can send. */
const RAW_SEGMENTS = ['%', '%zz', '..', '%2e%2e', '%2F', '%00', '%ED%A0%80', '%C0%AE', 'a%2Fb', '%252F'].map(t => new RawJson(t, t))

function pathValue(ctx: SchemaContext, op: Operation, name: string, schema: Schema, others: string[]): fc.Arbitrary<unknown> {
  const before = op.path.split(`/{${name}}`)[0]!.split('/').pop()!
  const collection = name !== 'id' ? name : before === 'uploads' ? 'notes' : before
  // a DELETE takes the ids set aside for it (`notes:delete`), so the others stay for the rest of the run
  const own = (op.method === 'DELETE' ? ctx.known[`${collection}:delete`] : undefined) ?? ctx.known[collection] ?? []
  const choices: fc.WeightedArbitrary<unknown>[] = [
    { arbitrary: validValue(ctx, schema), weight: 1 },
    { arbitrary: hostileValue(ctx, schema), weight: 2 },
    { arbitrary: fc.constantFrom(...RAW_SEGMENTS), weight: 1 },
  ]
  if (own.length) choices.push({ arbitrary: fc.constantFrom(...own), weight: 8 })
  if (others.length && name === 'id') choices.push({ arbitrary: fc.constantFrom(...others), weight: 1 })
  return fc.oneof(...choices)
}

/** Query parameters: each absent or present (mostly valid), and now and then one the operation does not have. */
function queryArbitrary(ctx: SchemaContext, op: Operation): fc.Arbitrary<string[]> {
  const declared = op.params.filter(p => p.in === 'query').map(p =>
    fc.option(fc.oneof({ arbitrary: validValue(ctx, p.schema, p.name), weight: 4 }, { arbitrary: hostileValue(ctx, p.schema), weight: 1 }).map(v => queryPairs(p.name, v)), { freq: 2, nil: [] as string[] }))
  const unknown = fc.option(fc.constantFrom('unknown=1', 'limit=1&limit=2', '__proto__[polluted]=1', 'a[b][c]=1', '=', '&&', 'q', '%zz=1', 'x=%ED%A0%80'), { freq: 5, nil: undefined })
  return fc.tuple(fc.tuple(...declared), unknown).map(([pairs, extra]) => [...pairs.flat(), ...(extra ? [extra] : [])])
}

const CONTENT_TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data; boundary=x']

function jsonBody(ctx: SchemaContext, schema: Schema): fc.Arbitrary<FuzzBody | undefined> {
  const value = fc.oneof(
    { arbitrary: validValue(ctx, schema), weight: 6 },
    { arbitrary: hostileValue(ctx, schema), weight: 6 },
    { arbitrary: hostileJsonBody, weight: 2 },
  )
  const contentType = fc.oneof({ arbitrary: fc.constant('application/json'), weight: 12 }, { arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined), weight: 1 })
  return fc.oneof(
    { arbitrary: fc.record({ contentType, json: value }), weight: 14 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  )
}

/** A multipart form from the schema: each field as text (arrays as repeated `name[]` fields), the binary one a file (random bytes, or `wav`). */
function formBody(ctx: SchemaContext, schema: Schema, wav: Uint8Array): fc.Arbitrary<FuzzBody> {
  const s = resolve(ctx, schema)
  const file = fc.oneof(
    fc.uint8Array({ maxLength: 4096 }).map(b => ({ file: b, type: 'audio/wav' })),
    fc.constant({ file: wav, type: 'audio/wav' }),
    fc.constantFrom('not a file', '', '\u0000'),
  )
  const entries = Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([name, p]) => {
    const value = p.format === 'binary' ? file.map(v => [v]) : fieldValue(ctx, p, name).map(v => (Array.isArray(v) ? v : [v]))
    const present = (s.required ?? []).includes(name) ? 8 : 2
    return fc.option(value.map(vs => vs.map(v => [name, typeof v === 'object' && v !== null && 'file' in v ? v : v instanceof RawJson ? v : typeof v === 'string' ? v : jsonText(v)] as FormEntry)), { freq: present, nil: [] as FormEntry[] })
  })
  const extra = fc.option(fc.constantFrom<FormEntry>(['unknown', 'x'], ['file', 'second file'], ['model', ''], ['\u0000', 'nul name']), { freq: 4, nil: undefined })
  return fc.tuple(fc.tuple(...entries), extra).map(([fields, e]) => ({ form: [...fields.flat(), ...(e ? [e] : [])] }))
}

function bodyArbitrary(ctx: SchemaContext, op: Operation, wav: Uint8Array): fc.Arbitrary<FuzzBody | undefined> {
  if (op.body?.kind === 'json') return jsonBody(ctx, op.body.schema)
  if (op.body?.kind === 'form') return fc.oneof({ arbitrary: formBody(ctx, op.body.schema, wav), weight: 8 }, { arbitrary: jsonBody(ctx, {}), weight: 1 })
  // an operation without a body sent one anyway (GET cannot carry one)
  if (op.method === 'GET') return fc.constant(undefined)
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: hostileJsonBody.map(json => ({ contentType: 'application/json', json })), weight: 1 })
}

/** How often each credential is used, and the library whose ids go with it. */
const CREDENTIALS: { auth: Auth; weight: number; library: 'live' | 'sandbox' }[] = [
  { auth: 'live', weight: 8, library: 'live' },
  { auth: 'sandbox', weight: 6, library: 'sandbox' },
  { auth: 'scoped', weight: 1, library: 'live' },
  { auth: 'bogus', weight: 1, library: 'live' },
  { auth: 'none', weight: 1, library: 'live' },
]

/** The requests of one operation with one credential, its path and body ids from `ctx`'s library. */
function requestArbitrary(ctx: SchemaContext, op: Operation, auth: Auth, others: string[], wav: Uint8Array): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.params.filter(p => p.in === 'path')
  const path = fc.tuple(...pathParams.map(p => pathValue(ctx, op, p.name, p.schema, others)))
    .map(values => pathParams.reduce((url, p, i) => url.replace(`{${p.name}}`, urlText(values[i])), op.path))
  return fc.record({
    path,
    query: queryArbitrary(ctx, op),
    body: bodyArbitrary(ctx, op, wav),
    repeat: fc.oneof({ arbitrary: fc.constant(1), weight: 3 }, { arbitrary: fc.constant(2), weight: 3 }, { arbitrary: fc.constant(3), weight: 1 }),
  }).map(r => ({
    operation: op.id,
    method: op.method,
    url: r.query.length ? `${r.path}?${r.query.join('&').slice(0, MAX_QUERY)}` : r.path,
    auth,
    ...(r.body ? { body: r.body } : {}),
    repeat: r.repeat,
  }))
}

/** The requests of every operation, each operation as likely as the others, with each credential. */
export function fuzzArbitrary(doc: OpenApiDocument, ops: Operation[], libraries: Libraries, wav: Uint8Array): fc.Arbitrary<FuzzRequest> {
  const contexts = { live: { doc, known: libraries.live }, sandbox: { doc, known: libraries.sandbox } }
  return fc.oneof(...ops.map(op => fc.oneof(...CREDENTIALS.map(c => ({ arbitrary: requestArbitrary(contexts[c.library], op, c.auth, libraries.others, wav), weight: c.weight })))))
}
