import type { TObject, TSchema } from '@sinclair/typebox'
import { ErrorEnvelopeSchema } from './schemas'
import { ERROR_STATUS, type ErrorCode } from './errors'
import { jsonBody } from './json-body'
import { operation } from './operations'

const COMMON_ERRORS: ErrorCode[] = ['invalid_request', 'invalid_token', 'insufficient_scope', 'rate_limited', 'internal_error']

/**
 * What each operation answers and takes, recorded as its route is declared. Success shapes are
 * documented here rather than given to Elysia as `response`, which would check and re-encode every
 * response at run time (half the cost of a list request); tests check responses against them instead.
 */
const errorCodesOf = new Map<string, ErrorCode[]>()
const bodyOf = new Map<string, TSchema>()
const successOf = new Map<string, Record<number, TSchema>>()
const queryOf = new Map<string, TObject>()

/** The success schemas of an operation, for tests that check real responses against the document. */
export function successSchemas(operationId: string): Record<number, TSchema> {
  return successOf.get(operationId) ?? {}
}

function errorResponses(codes: ErrorCode[]) {
  const responses: Record<string, unknown> = {}
  for (const code of codes) {
    const status = String(ERROR_STATUS[code])
    const existing = responses[status] as { description: string } | undefined
    responses[status] = {
      description: existing ? `${existing.description}, ${code}` : code,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return responses
}

/**
 * Route options for one operation from the operations table: the OpenAPI annotations (operationId,
 * scopes as the security requirement, `x-service-credits`, rate class).
 */
export function documented(operationId: string, extraErrors: ErrorCode[] = [], success: Record<number, TSchema> = {}) {
  const op = operation(operationId)
  errorCodesOf.set(op.id, op.public ? ['rate_limited', 'internal_error'] : [...COMMON_ERRORS, ...extraErrors])
  successOf.set(op.id, success)
  return {
    detail: {
      operationId: op.id,
      summary: op.summary,
      tags: [op.tag],
      security: op.public ? [] : [{ apiKey: op.scopes }, { oauth2: op.scopes }],
      'x-service-credits': op.credits,
      'x-rate-limit-class': op.rateClass,
      ...(op.scopes.length ? { 'x-scopes': op.scopes } : {}),
    } as Record<string, unknown>,
  }
}

type Doc = { paths?: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown>; requestBody?: unknown; parameters?: { in: string }[] }>> }

/**
 * Completes the generated document: each operation's error responses (the generator keeps only the
 * success schemas) and request bodies described as JSON only. Idempotent.
 */
export function completeDocument<T>(doc: T): T {
  for (const methods of Object.values((doc as Doc).paths ?? {})) {
    for (const o of Object.values(methods)) {
      if (!o.operationId) continue
      const success: Record<string, unknown> = Object.fromEntries(Object.entries(successOf.get(o.operationId) ?? {}).map(([status, schema]) => [status, {
        description: (schema as { title?: string }).title ?? 'success',
        content: { 'application/json': { schema } },
      }]))
      if (o.operationId === 'deleteNote' || o.operationId === 'deleteFolder') success['204'] = { description: 'deleted; no body' }
      o.responses = { ...success, ...errorResponses(errorCodesOf.get(o.operationId) ?? []) }
      const query = queryOf.get(o.operationId)
      if (query) {
        const required = new Set(query.required ?? [])
        o.parameters = [
          ...(o.parameters ?? []).filter(p => p.in !== 'query'),
          ...Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', required: required.has(name), schema, ...((schema as { description?: string }).description ? { description: (schema as { description?: string }).description } : {}) })),
        ]
      }
      const body = o.operationId ? bodyOf.get(o.operationId) : undefined
      if (body) o.requestBody = { required: true, content: { 'application/json': { schema: body } } }
    }
  }
  return doc
}

/**
 * `documented` for an operation with query parameters, documented from `query`. The handler checks
 * them with `queryValidator(query)` (a route hook for it would cost every request more than the check).
 */
export function documentedWithQuery(operationId: string, extraErrors: ErrorCode[], success: Record<number, TSchema>, query: TObject) {
  queryOf.set(operationId, query)
  return documented(operationId, extraErrors, success)
}

/** `documented` for an operation with a JSON body: the body schema validates and documents it. */
export function documentedWithBody<B extends TSchema>(operationId: string, extraErrors: ErrorCode[], body: B, success: Record<number, TSchema> = {}) {
  bodyOf.set(operationId, body)
  return { body, ...jsonBody, ...documented(operationId, extraErrors, success) }
}

export { ErrorEnvelopeSchema }
