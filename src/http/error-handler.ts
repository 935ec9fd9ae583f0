import { Elysia, ValidationError } from 'elysia'
import { ApiError, errorEnvelope, type ErrorDetail } from './errors'
import type { Logger } from '../log'

/** Which methods a path serves, for 405 `Allow`; empty when the path is unknown. */
export type MethodsForPath = (path: string) => string[]

export function methodsForPathFrom(routes: { method: string; path: string }[]): MethodsForPath {
  const compiled = routes
    .filter(r => r.method !== 'ALL')
    .map(r => ({
      method: r.method,
      re: new RegExp('^' + r.path.split('/').map(seg => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '$'),
    }))
  return path => {
    const methods = new Set<string>()
    for (const r of compiled) if (r.re.test(path)) methods.add(r.method)
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods].sort()
  }
}

function fieldName(type: string, path: string): string {
  const p = path.replace(/^\//, '').replaceAll('/', '.')
  return p === '' ? type : p
}

function validationDetails(err: ValidationError): ErrorDetail[] {
  const seen = new Map<string, string>()
  for (const e of err.all as { path: string; message: string; summary?: string; value?: unknown; schema?: { error?: unknown } }[]) {
    const field = fieldName(err.type, e.path ?? '')
    if (seen.has(field)) continue
    const custom = typeof e.schema?.error === 'string' ? e.schema.error : undefined
    seen.set(field, e.value === undefined && e.path ? 'is required' : custom ?? e.summary ?? e.message)
  }
  return [...seen].map(([field, issue]) => ({ field, issue }))
}

/**
 * Query numbers are coerced from strings, and a coerced value that breaks a bound fails inside
 * Elysia's decoder with the type "property" and no path. Only query parameters are coerced, so the
 * field is the query parameter holding that value.
 */
function coercedQueryDetails(err: ValidationError, url: string): ErrorDetail[] {
  const schema = err.validator as { error?: unknown }
  const issue = typeof schema?.error === 'string' ? schema.error : err.messageValue?.message ?? 'is not valid'
  const params = [...new URL(url).searchParams]
  const match = params.find(([, v]) => v === String(err.value) || (v.trim() !== '' && Number(v) === err.value))
  return [{ field: match?.[0] ?? 'query', issue }]
}

function toApiError(code: string | number, error: unknown, request: Request, path: string, methodsForPath: () => MethodsForPath): ApiError | null {
  if (error instanceof ApiError) return error
  if (code === 'VALIDATION' && error instanceof ValidationError && error.type === 'property') {
    const details = coercedQueryDetails(error, request.url)
    return new ApiError('invalid_request', `The query parameters failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`, { details })
  }
  if (code === 'VALIDATION' && error instanceof ValidationError) {
    const details = validationDetails(error)
    const where = error.type === 'query' ? 'query parameters' : error.type === 'params' ? 'path' : 'request body'
    return new ApiError('invalid_request', `The ${where} failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`, { details })
  }
  if (code === 'PARSE') {
    return new ApiError('invalid_request', 'The request body could not be parsed; send JSON with `Content-Type: application/json`.')
  }
  if (code === 'NOT_FOUND') {
    const allow = methodsForPath()(path)
    if (allow.length) {
      return new ApiError('method_not_allowed', `${path} does not serve this method; it serves ${allow.join(', ')}.`, { headers: { allow: allow.join(', ') } })
    }
    return new ApiError('not_found', `There is no endpoint at ${path}. GET /v1 lists the resources.`)
  }
  return null
}

/** Request ids on every response, and every failure as the SPEC's envelope. */
export function errorHandler(opts: { docsUrl: string; log: Logger; methodsForPath: () => MethodsForPath; newRequestId: () => string }) {
  return new Elysia({ name: 'notesvc-errors' })
    .onRequest(({ set }) => {
      set.headers['x-request-id'] = opts.newRequestId()
    })
    .onError({ as: 'global' }, ({ code, error, set, request, path }) => {
      const requestId = set.headers['x-request-id'] as string | undefined
      let apiError = toApiError(code, error, request, path, opts.methodsForPath)
      if (!apiError) {
        opts.log.error('unhandled error', { requestId, method: request.method, path, error })
        apiError = new ApiError('internal_error', `The service failed to process the request. Quote request id ${requestId ?? 'unknown'} when reporting it.`)
      }
      set.status = apiError.status
      set.headers['content-type'] = 'application/json; charset=utf-8'
      for (const [k, v] of Object.entries(apiError.options.headers ?? {})) set.headers[k] = v
      return errorEnvelope(apiError, opts.docsUrl, requestId)
    })
}
