import { operationDefiner } from '../../http/contract'
import { charged } from '../../http/answer'
import { IdParams } from '../../http/schemas'
import { CreateUploadRequest, Upload, UploadAccepted } from './model'
import type { UploadsService } from './service'

const defineOperation = operationDefiner<{ uploads: UploadsService }>()

const createUpload = defineOperation({
  id: 'createUpload', method: 'POST', path: '/v1/uploads', tag: 'Processing',
  summary: 'Start an upload',
  description: 'Creates a note awaiting its media and returns a signed URL: PUT the file there with the returned headers, then complete the upload. Nothing is charged yet. 413 when the declared size is over 5 GB, 415 when the type is not audio or video.',
  scopes: ['transcriptions:write', 'notes:write'], credits: 0,
  body: CreateUploadRequest,
  responses: { 201: Upload },
  errors: ['payload_too_large', 'unsupported_media_type'],
}, (body, { principal }, { uploads }) => uploads.createUpload(principal, body))

const completeUpload = defineOperation({
  id: 'completeUpload', method: 'POST', path: '/v1/uploads/:id/complete', tag: 'Processing',
  summary: 'Complete an upload and start processing',
  description: 'Charges 1 credit per started minute of the file and starts transcription and summarization in the background (202); poll the note\'s status. Completing it again answers 200 and charges nothing. 409 when the file has not arrived.',
  scopes: ['transcriptions:write', 'notes:write'], credits: '1 per started minute',
  params: IdParams,
  responses: { 202: UploadAccepted, 200: UploadAccepted },
  errors: ['insufficient_credits', 'upstream_failure', 'not_found', 'conflict'],
}, async ({ id }, caller, { uploads }) => {
  const r = await uploads.completeUpload(caller.principal, id, caller.scenario?.() ?? null)
  return charged(r, { status: r.accepted ? 202 : 200 })
})

export const uploadsOperations = [createUpload, completeUpload] as const
