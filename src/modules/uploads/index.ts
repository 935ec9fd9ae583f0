import { Elysia, t } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithBody } from '../../http/openapi'
import { noBody } from '../../http/json-body'
import { ApiError } from '../../http/errors'
import { IdParams } from '../../http/schemas'
import type { MediaStorage } from '../../storage/storage'
import type { DiskStorage } from '../../storage/disk'
import { CreateUploadRequest, Upload, UploadAccepted } from './model'
import type { UploadsService } from './service'

export function uploadsRoutes(deps: { guard: ReturnType<typeof authGuard>; uploads: UploadsService; storage: MediaStorage }) {
  const { uploads, storage } = deps
  return new Elysia({ name: 'uploads-routes' })
    .use(deps.guard)
    .post('/v1/uploads', async ({ principal, body, set }) => {
      const upload = await uploads.createUpload(requirePrincipal(principal), body)
      set.status = 201
      return upload
    }, {
      ...documentedWithBody('createUpload', ['payload_too_large', 'unsupported_media_type'], CreateUploadRequest, { 201: Upload }),
    })
    .post('/v1/uploads/:id/complete', async ({ principal, params, set }) => {
      const r = await uploads.completeUpload(requirePrincipal(principal), params.id)
      set.status = r.accepted ? 202 : 200
      set.headers['x-credits-remaining'] = String(r.creditsRemaining)
      return r.body
    }, {
      params: IdParams,
      ...noBody,
      ...documented('completeUpload', ['insufficient_credits', 'upstream_failure', 'not_found', 'conflict'], { 200: UploadAccepted, 202: UploadAccepted }),
    })
    // The signed PUT target of disk storage (DECISIONS.md "Uploads on disk storage"): authorised by
    // its signature, not a bearer; the body is streamed to disk, never buffered whole.
    .put('/v1/uploads/:id/file', async ({ params, query, request }) => {
      if (storage.kind !== 'disk') throw new ApiError('not_found', 'This server stores uploads in S3: PUT the file to the uploadUrl POST /v1/uploads returned.')
      return uploads.receiveFile(storage as DiskStorage, params.id, query, request)
    }, {
      params: IdParams,
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      ...noBody,
      detail: { hide: true },
    })
}
