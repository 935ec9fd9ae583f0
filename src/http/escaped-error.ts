import { loggedPath } from './logged-path'
import type { Logger } from '../log'
import { accessLine } from './access-log'
import { ApiError, errorEnvelope } from './errors'
import { ANSWER_HEADERS } from './security-headers'

/** The answer to an error that escaped the application; `request` and `started` unknown only in Bun's own error handler. */
export type EscapedErrorAnswer = (error: unknown, request?: Request, started?: number) => Response

/**
 * What the server answers when an error escapes the application (http/listen.ts): a bug, since every
 * route's errors go through the error handler. The envelope's 500 with a new request id, as the error
 * handler answers an unhandled error: the error logged with the request's method and path (never its
 * query, which may carry what a user typed), one access-log line (NOTESVC_ACCESS_LOG), and never a
 * stack trace or a file path in the answer.
 */
export function escapedErrorAnswer(opts: { docsUrl: string; log: Logger; accessLog?: Logger; newRequestId?: () => string }): EscapedErrorAnswer {
  const newRequestId = opts.newRequestId ?? (() => `req_${crypto.randomUUID()}`)
  return (error, request, started) => {
    const requestId = newRequestId()
    const method = request?.method ?? 'unknown'
    let path = 'unknown'
    try {
      if (request) path = new URL(request.url).pathname
    } catch {}
    opts.log.error('unhandled error', { requestId, method, path: loggedPath(path), escaped: true, error })
    // the route template is not known out here: '*', as for a request no route matched
    opts.accessLog?.info('request', accessLine(method, '*', 500, started ?? performance.now(), requestId, undefined))
    const apiError = new ApiError('internal_error', `The service failed to process the request. Quote request id ${requestId} when reporting it.`)
    return new Response(JSON.stringify(errorEnvelope(apiError, opts.docsUrl, requestId)), {
      status: 500,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...ANSWER_HEADERS },
    })
  }
}
