/**
 * @notesvc/client: a typed client of the notesvc HTTP API (one method per operationId, generated from
 * the server's contract), its errors as classes, retries, pagination, uploads and webhook checks.
 * Runs in Bun, Node and browsers.
 */
export { createClient, type ClientOptions, type Fetch, type NotesvcClient } from './client.js'
export { NotesvcError, NoteFailedError, WebhookVerificationError, type ErrorDetail } from './errors.js'
export * from './generated/errors.js'
export type { $defs, components, operations, paths, webhooks } from './generated/openapi.js'
export type { OperationId, OperationMethods, Paginators } from './generated/operations.js'
export type { RetryOptions, Sleep } from './retry.js'
export type { CallOptions, InputOf, OutputOf } from './types.js'
export type { NoteStatus, UploadedNote, UploadRecordingOptions } from './upload.js'
export { verifyWebhook, type WebhookEvent } from './webhooks.js'
