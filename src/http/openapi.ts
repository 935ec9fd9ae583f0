import type { TSchema } from '@sinclair/typebox'
import { SCOPES, TAGS, type Operation } from './contract'
import { ERROR_MEANING, ERROR_STATUS, type ErrorCode } from './errors'
import { ErrorEnvelopeSchema } from './schemas'

/** What every credentialed operation may answer besides its own errors; the public ones only the last two. */
const COMMON_ERRORS: ErrorCode[] = ['invalid_request', 'invalid_token', 'insufficient_scope', 'rate_limited', 'internal_error']
const PUBLIC_ERRORS: ErrorCode[] = ['rate_limited', 'internal_error']

const REASON: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content' }

/**
 * The JSON Schema keywords a published schema keeps. The rest stay inside the service: the validation
 * messages (`error`) and anything else a validator reads but a client generator would trip on.
 */
const KEYWORDS = new Set([
  'type', 'properties', 'required', 'items', 'additionalProperties', 'patternProperties', 'anyOf', 'allOf', 'oneOf', 'not',
  'const', 'enum', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties',
  'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
])
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties'])
const SUBSCHEMA_LISTS = new Set(['anyOf', 'allOf', 'oneOf'])
/** The key TypeBox gives the values of a record with string keys. */
const ANY_KEY = '^(.*)$'

type Json = Record<string, unknown>

const pascal = (code: string) => code.split('_').map(w => w[0]!.toUpperCase() + w.slice(1)).join('')
const sortedByName = (o: Json): Json => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)))
const mapValues = (o: Json, f: (v: unknown) => unknown): Json => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]))

/**
 * The components of the document, filled as operations are published: every schema with a `title`
 * becomes a named schema referenced by `$ref`; two different schemas may not share a title.
 */
class Components {
  readonly schemas: Json = {}
  readonly responses: Json = {}
  private readonly sources = new Map<string, string>()

  /** A model schema as published: a reference when it has a title, else the schema itself. */
  schema(schema: unknown): unknown {
    const s = schema as Json
    if (typeof s.title !== 'string') return this.body(s)
    const source = JSON.stringify(s)
    const known = this.sources.get(s.title)
    if (known === undefined) {
      this.sources.set(s.title, source)
      this.schemas[s.title] = this.body(s)
    } else if (known !== source) {
      throw new Error(`two different schemas are titled ${s.title}; give one of them another title`)
    }
    return { $ref: `#/components/schemas/${s.title}` }
  }

  /** The named response of an error code: the envelope, and `Retry-After` on 429. */
  errorResponse(code: ErrorCode): Json {
    const name = pascal(code)
    this.responses[name] ??= {
      description: `${code}: ${ERROR_MEANING[code]}`,
      ...(code === 'rate_limited' ? { headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } } : {}),
      content: { 'application/json': { schema: this.schema(ErrorEnvelopeSchema) } },
    }
    return { $ref: `#/components/responses/${name}` }
  }

  private body(s: Json): Json {
    const out: Json = {}
    for (const [k, v] of Object.entries(s)) {
      if (!KEYWORDS.has(k)) continue
      if (SUBSCHEMA_MAPS.has(k)) out[k] = mapValues(v as Json, x => this.schema(x))
      else if (SUBSCHEMA_LISTS.has(k)) out[k] = (v as unknown[]).map(x => this.schema(x))
      else if ((k === 'items' || k === 'not' || k === 'additionalProperties') && typeof v === 'object') out[k] = this.schema(v)
      else out[k] = v
    }
    return simplified(out)
  }
}

/**
 * Two shapes TypeBox writes its own way, as JSON Schema says them plainly: a record with string keys
 * (`patternProperties` matching any key) as `additionalProperties`, and a union of string constants
 * as an `enum`.
 */
function simplified(s: Json): Json {
  const pattern = s.patternProperties as Json | undefined
  if (pattern && Object.keys(pattern).length === 1 && ANY_KEY in pattern) {
    delete s.patternProperties
    s.additionalProperties = pattern[ANY_KEY]
  }
  const branches = s.anyOf as Json[] | undefined
  if (branches?.every(b => typeof b.const === 'string' && Object.keys(b).every(k => k === 'const' || k === 'type'))) {
    delete s.anyOf
    s.type = 'string'
    s.enum = branches.map(b => b.const)
  }
  return s
}

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}')

function parameters(op: Operation, c: Components): Json[] {
  const list: Json[] = []
  for (const [where, schema] of [['path', op.params], ['query', op.query]] as const) {
    if (!schema) continue
    const required = new Set(schema.required ?? [])
    for (const [name, property] of Object.entries(schema.properties)) {
      const { description, ...rest } = c.schema(property) as Json
      list.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest })
    }
  }
  return list
}

function successResponses(op: Operation, c: Components): Json {
  const headers: Json = {
    'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
    'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
    'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
    ...(op.credits !== 0 ? { 'X-Credits-Remaining': { $ref: '#/components/headers/X-Credits-Remaining' } } : {}),
  }
  const text = Object.fromEntries((op.textResponses ?? []).map(type => [type, { schema: { type: 'string' } }]))
  // a file answer has no JSON form: text files as strings, others (a .docx) as bytes
  const files = op.fileResponses && Object.fromEntries(op.fileResponses.map(type => [type, { schema: type.startsWith('text/') ? { type: 'string' } : { type: 'string', format: 'binary' } }]))
  return mapValues(op.responses, (schema) => {
    const s = schema as TSchema | null
    if (!s) return { description: 'No content', headers }
    if (files) return { description: s.description ?? s.title ?? 'Success', headers: { ...headers, 'Content-Disposition': { description: 'attachment, with a file name from the note\'s title', schema: { type: 'string' } } }, content: files }
    return { description: s.title ?? 'Success', headers, content: { 'application/json': { schema: c.schema(s) }, ...text } }
  })
}

function errorResponses(op: Operation, c: Components): Json {
  const codes = [...(op.public ? PUBLIC_ERRORS : COMMON_ERRORS), ...op.errors]
  return Object.fromEntries(codes.map(code => [String(ERROR_STATUS[code]), c.errorResponse(code)]))
}

function publishOperation(op: Operation, c: Components): Json {
  const responses = { ...successResponses(op, c), ...errorResponses(op, c) }
  for (const status of Object.keys(op.responses)) {
    const reason = REASON[status]
    const r = responses[status] as Json
    if (reason && r.content) r.description = `${reason}: ${r.description}`
  }
  const params = parameters(op, c)
  return {
    operationId: op.id,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: op.public ? [] : [{ apiKey: [...op.scopes] }, { oauth2: [...op.scopes] }],
    'x-service-credits': op.credits,
    'x-rate-limit-class': op.rateClass,
    ...(op.scopes.length ? { 'x-scopes': [...op.scopes] } : {}),
    ...(op.public ? {} : { 'x-notesvc-role': op.role }),
    ...(params.length ? { parameters: params } : {}),
    ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: c.schema(op.body) } } } } : {}),
    ...(op.multipartBody ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: c.schema(op.multipartBody) } } } } : {}),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  }
}

const header = (description: string, schema: Json = { type: 'integer' }) => ({ description, schema })

export interface DocumentInfo {
  title: string
  description: string
  version: string
  publicUrl: string
  docsUrl: string
}

/**
 * The OpenAPI document of the API, from the operations table alone: each operation's parameters, body
 * and responses from its declared schemas, the named components they reference, scopes as security
 * requirements, and the cost and rate class as extensions.
 */
export function openApiDocument(info: DocumentInfo, operations: readonly Operation[]): Json {
  const c = new Components()
  const paths: Record<string, Json> = {}
  for (const op of operations) (paths[openApiPath(op.path)] ??= {})[op.method.toLowerCase()] = publishOperation(op, c)
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description, contact: { name: 'notesvc documentation', url: info.docsUrl } },
    servers: [{ url: info.publicUrl, description: 'this server' }],
    tags: TAGS.map(t => ({ ...t })),
    paths,
    components: {
      schemas: sortedByName(c.schemas),
      responses: sortedByName(c.responses),
      headers: {
        'X-RateLimit-Limit': header('requests allowed per 60-second window in this operation\'s rate class'),
        'X-RateLimit-Remaining': header('requests left in the current window'),
        'X-RateLimit-Reset': header('seconds until the window resets'),
        'X-Credits-Remaining': header('the credit balance after this request'),
        'Retry-After': header('seconds to wait before retrying'),
      },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (svc_live_… or svc_test_…), an OAuth access token or an ID token.' },
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.1 authorization code with PKCE (S256); clients may register themselves.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${info.publicUrl}/oauth/authorize`,
              tokenUrl: `${info.publicUrl}/oauth/token`,
              refreshUrl: `${info.publicUrl}/oauth/token`,
              scopes: Object.fromEntries(SCOPES.map(s => [s.scope, s.description])),
            },
          },
        },
      },
    },
  }
}

/** The success schemas of an operation by status, for tests that check real responses against them. */
export function successSchemas(op: Operation): Record<number, TSchema> {
  return Object.fromEntries(Object.entries(op.responses).filter(([, s]) => s !== null)) as Record<number, TSchema>
}
