import { loggedPath } from './logged-path'
import { Elysia, ValidationError } from 'elysia'
import { BodyTooLargeError } from './body-limit'
import { ApiError, detailsFromValueErrors, errorEnvelope, knownApiError, validationMessage } from './errors'
import type { Logger } from '../log'
import { ANSWER_HEADERS } from './security-headers'

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

function toApiError(code: string | number, error: unknown, path: string, methodsForPath: () => MethodsForPath): ApiError | null {
  const known = knownApiError(error) // an ApiError, or 503 for a database that cannot be reached
  if (known) return known
  if (error instanceof BodyTooLargeError) return new ApiError('payload_too_large', `${error.message} Send less.`)
  if (code === 'VALIDATION' && error instanceof ValidationError) {
    const details = detailsFromValueErrors(error.type, error.all as Parameters<typeof detailsFromValueErrors>[1])
    return new ApiError('invalid_request', validationMessage(error.type, details), { details })
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

/** Request ids and the security headers on every response, and every failure as the SPEC's envelope. */
export function errorHandler(opts: { docsUrl: string; log: Logger; methodsForPath: () => MethodsForPath; newRequestId: () => string }) {
  return new Elysia({ name: 'notesvc-errors' })
    .onRequest(({ set }) => {
      set.headers['x-request-id'] = opts.newRequestId()
      // no-store and nosniff (http/security-headers.ts); an answer's own headers win
      set.headers['cache-control'] = ANSWER_HEADERS['cache-control']
      set.headers['x-content-type-options'] = ANSWER_HEADERS['x-content-type-options']
    })
    .onError({ as: 'global' }, ({ code, error, set, request, path }) => {
      const requestId = set.headers['x-request-id'] as string | undefined
      let apiError = toApiError(code, error, path, opts.methodsForPath)
      if (apiError?.code === 'service_unavailable') {
        opts.log.warn('the database cannot be reached', { requestId, method: request.method, path: loggedPath(path), error: (error as Error).message })
      } else if (!apiError) {
        opts.log.error('unhandled error', { requestId, method: request.method, path: loggedPath(path), error })
        apiError = new ApiError('internal_error', `The service failed to process the request. Quote request id ${requestId ?? 'unknown'} when reporting it.`)
      }
      set.status = apiError.status
      set.headers['content-type'] = 'application/json; charset=utf-8'
      for (const [k, v] of Object.entries(apiError.options.headers ?? {})) set.headers[k] = v
      return errorEnvelope(apiError, opts.docsUrl, requestId)
    })
}
