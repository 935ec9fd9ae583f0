/** One detail of a 400: the field at fault and what is wrong with it. */
export interface ErrorDetail {
  field: string
  issue: string
}

/** What the server's error envelope (`{ error: { … } }`) and its answer's headers say. */
export interface NotesvcErrorFields {
  code: string
  status: number
  message: string
  requestId: string | null
  retryAfter: number | null
  details: ErrorDetail[]
  docUrl: string | null
}

/**
 * Any error answer of the server, as the subclass of its code (generated/errors.ts: `NotFoundError`,
 * `RateLimitedError`, …), so callers branch with `instanceof` or on `code`.
 */
export class NotesvcError extends Error {
  override readonly name: string = 'NotesvcError'
  readonly code: string
  readonly status: number
  /** the request's id (X-Request-Id): quote it when reporting a problem */
  readonly requestId: string | null
  /** seconds to wait before trying again (Retry-After), when the server said */
  readonly retryAfter: number | null
  readonly details: ErrorDetail[]
  /** the page of the errors reference that explains this code */
  readonly docUrl: string | null

  constructor(fields: NotesvcErrorFields) {
    super(fields.message)
    this.code = fields.code
    this.status = fields.status
    this.requestId = fields.requestId
    this.retryAfter = fields.retryAfter
    this.details = fields.details
    this.docUrl = fields.docUrl
  }
}

/** A note whose processing ended in `Error` (uploadRecording): `errorCode` says why. */
export class NoteFailedError extends Error {
  override readonly name: string = 'NoteFailedError'
  constructor(readonly noteId: string, readonly errorCode: string | null, message: string) {
    super(message)
  }
}

/** A webhook whose signature, timestamp or headers do not check out (verifyWebhook). */
export class WebhookVerificationError extends Error {
  override readonly name: string = 'WebhookVerificationError'
}
