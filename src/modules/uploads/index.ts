import { t } from 'elysia'
import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { noBody } from '../../http/json-body'
import { ApiError } from '../../http/errors'
import { withCreditsRemaining } from '../../http/responses'
import { IdParams } from '../../http/schemas'
import type { MediaStorage } from '../../storage/storage'
import type { DiskStorage } from '../../storage/disk'
import { completeUpload, createUpload } from './contract'
import type { UploadsService } from './service'

export function uploadsRoutes(deps: { guard: ReturnType<typeof authGuard>; uploads: UploadsService; storage: MediaStorage }) {
  const { uploads, storage } = deps
  return contractRoutes('uploads-routes', deps.guard, [
    route(createUpload, async ({ principal, body, set }) => {
      const upload = await uploads.createUpload(principal, body)
      set.status = 201
      return upload
    }),
    route(completeUpload, async ({ principal, params, set }) => {
      const r = await uploads.completeUpload(principal, params.id)
      set.status = r.accepted ? 202 : 200
      return withCreditsRemaining(set, r)
    }),
  ])
    // The signed PUT target of disk storage: not an operation of the API but where the uploadUrl of
    // createUpload points. Authorised by its signature, not a bearer; the body is streamed to disk.
    .put('/v1/uploads/:id/file', async ({ params, query, request }) => {
      if (storage.kind !== 'disk') throw new ApiError('not_found', 'This server stores uploads in S3: PUT the file to the uploadUrl POST /v1/uploads returned.')
      return uploads.receiveFile(storage as DiskStorage, params.id, query, request)
    }, {
      params: IdParams,
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      ...noBody,
    })
}
