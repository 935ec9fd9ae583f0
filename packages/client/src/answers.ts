/** How the client reads the server's answers: a success's body by its type, a refusal as the error class of its code. */
import { NotesvcError, type ErrorDetail } from './errors.js'
import { ERROR_CLASSES, ERROR_STATUS, type ErrorCode } from './generated/errors.js'
import { retryAfterSeconds } from './retry.js'

type Envelope = { error?: { code?: unknown; message?: unknown; request_id?: unknown; retry_after_seconds?: unknown; details?: unknown; doc_url?: unknown } }

const TEXT_TYPES = /^(text\/|application\/x-subrip|application\/x-ndjson)/

/** A success answer's body: parsed JSON, text for text types, a Blob for files, undefined for none. */
export async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined
  const type = response.headers.get('content-type') ?? ''
  if (TEXT_TYPES.test(type)) return response.text()
  if (type.includes('json')) {
    const text = await response.text()
    return text === '' ? undefined : JSON.parse(text)
  }
  return response.blob()
}

const codeOfStatus = (status: number): string =>
  (Object.keys(ERROR_STATUS) as ErrorCode[]).find(code => ERROR_STATUS[code] === status) ?? 'http_error'

/** The error of a refused request, from its envelope and headers (or its status alone, when a proxy answered). */
export function errorOf(response: Response, body: unknown): NotesvcError {
  const e = (body as Envelope | undefined)?.error ?? {}
  const code = typeof e.code === 'string' ? e.code : codeOfStatus(response.status)
  const Class = ERROR_CLASSES[code as ErrorCode] ?? NotesvcError
  const headerRetry = retryAfterSeconds(response.headers.get('retry-after'))
  return new Class({
    code,
    status: response.status,
    message: typeof e.message === 'string' ? e.message : `notesvc answered ${response.status} ${response.statusText} without an error envelope.`,
    requestId: response.headers.get('x-request-id') ?? (typeof e.request_id === 'string' ? e.request_id : null),
    retryAfter: headerRetry ?? (typeof e.retry_after_seconds === 'number' ? e.retry_after_seconds : null),
    details: Array.isArray(e.details) ? e.details as ErrorDetail[] : [],
    docUrl: typeof e.doc_url === 'string' ? e.doc_url : null,
  })
}

