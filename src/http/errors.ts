import { asDatabaseUnavailable } from '../db/store'

/**
 * The SPEC's error codes and the HTTP status each one carries, and one beyond them:
 * `service_unavailable` (503, with Retry-After) when the database cannot be reached
 * (docs/decisions.md, "Errors and outages"), and `precondition_failed` (412) for an edit whose
 * `If-Match` names a transcript version that is no longer the current one, and `sharing_disabled`
 * (403) for a share link asked of an instance that turned them off (NOTESVC_SHARING=off).
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_token: 401,
  insufficient_credits: 402,
  insufficient_scope: 403,
  sharing_disabled: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  content_policy: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_failure: 502,
  service_unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** What each code means, for the errors page and the OpenAPI document. */
export const ERROR_MEANING: Record<ErrorCode, string> = {
  invalid_request: 'The request is malformed or failed validation; `details` names each field at fault.',
  invalid_token: 'The credential is missing, malformed, expired or revoked. Send `Authorization: Bearer <key>`.',
  insufficient_credits: 'The account has no credits left for this operation. Add credits or wait for the monthly grant.',
  insufficient_scope: 'The credential is valid but lacks a scope this operation needs; create a key with that scope.',
  sharing_disabled: 'Share links are turned off on this instance (NOTESVC_SHARING=off); its operator can turn them on.',
  not_found: 'The resource does not exist in the library this credential sees.',
  method_not_allowed: 'The path exists but does not serve this method; the `Allow` header lists the ones it does.',
  conflict: 'The request conflicts with the current state of the resource (for example the note is still processing).',
  precondition_failed: 'The resource changed since the version sent in `If-Match`; read it again (its `ETag`), then send the change again.',
  payload_too_large: 'The uploaded file exceeds the size limit.',
  unsupported_media_type: 'The file format is not supported; send audio or video.',
  content_policy: 'The content was refused by the content policy.',
  rate_limited: 'Too many requests in this window; wait `Retry-After` seconds.',
  internal_error: 'The service failed to process the request; quote `request_id` when reporting it.',
  upstream_failure: 'A provider the service depends on (a model engine, a media tool) failed.',
  service_unavailable: 'The service\'s database cannot be reached right now; retry after `Retry-After` seconds.',
}

export interface ErrorDetail {
  field: string
  issue: string
}

/** The one way to fail: throw this and the error handler turns it into the envelope. */
export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { details?: ErrorDetail[]; retryAfterSeconds?: number; headers?: Record<string, string> } = {},
  ) {
    super(message)
    this.status = ERROR_STATUS[code]
  }
}

export interface ErrorEnvelope {
  error: {
    type: 'invalid_request_error'
    code: ErrorCode
    message: string
    doc_url: string
    details?: ErrorDetail[]
    retry_after_seconds?: number
    request_id?: string
  }
}

export function errorEnvelope(
  err: ApiError,
  docsUrl: string,
  requestId: string | undefined,
): ErrorEnvelope {
  const body: ErrorEnvelope['error'] = {
    type: 'invalid_request_error',
    code: err.code,
    message: err.message,
    doc_url: `${docsUrl}/errors#${err.code}`,
  }
  if (err.options.details?.length) body.details = err.options.details
  if (err.options.retryAfterSeconds !== undefined) body.retry_after_seconds = err.options.retryAfterSeconds
  if (requestId) body.request_id = requestId
  return { error: body }
}

/**
 * What the envelope says of a thrown error it can name: an ApiError as it is, a database that cannot
 * be reached (`DatabaseUnavailableError`, or a driver's error that is one) as 503
 * `service_unavailable` with `Retry-After`; null for anything else (a 500).
 */
export function knownApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err
  const down = asDatabaseUnavailable(err)
  if (!down) return null
  const wait = down.retryAfterSeconds
  return new ApiError('service_unavailable', `The service's database cannot be reached right now. Retry after ${wait} second${wait === 1 ? '' : 's'}.`, {
    retryAfterSeconds: wait,
    headers: { 'retry-after': String(wait) },
  })
}

export const notFound = (what: string, id: string) => new ApiError('not_found', `No ${what} with id ${id} exists in this library.`)

interface ValueErrorLike {
  path: string
  message: string
  summary?: string
  value?: unknown
  schema?: { error?: unknown }
}

/**
 * One detail per field at fault, from the validator's errors: a field that is missing says so; a
 * schema's own `error` text wins over the validator's wording.
 */
export function detailsFromValueErrors(part: string, errors: ValueErrorLike[]): ErrorDetail[] {
  const seen = new Map<string, string>()
  for (const e of errors) {
    const p = (e.path ?? '').replace(/^\//, '').replaceAll('/', '.')
    const field = p === '' ? part : p
    if (seen.has(field)) continue
    const custom = typeof e.schema?.error === 'string' ? e.schema.error : undefined
    seen.set(field, e.value === undefined && p ? 'is required' : custom ?? e.summary ?? e.message)
  }
  return [...seen].map(([field, issue]) => ({ field, issue }))
}

export function validationMessage(part: string, details: ErrorDetail[]): string {
  const where = part === 'query' ? 'query parameters' : part === 'params' ? 'path' : 'request body'
  return `The ${where} failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`
}
