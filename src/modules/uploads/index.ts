import { Elysia, t } from 'elysia'
import type { authGuard } from '../../http/auth'
import { noBody } from '../../http/json-body'
import { ApiError } from '../../http/errors'
import { IdParams } from '../../http/schemas'
import type { MediaStorage } from '../../storage/storage'
import type { DiskStorage } from '../../storage/disk'
import type { UploadsService } from './service'

export function uploadsRoutes(deps: { guard: ReturnType<typeof authGuard>; uploads: UploadsService; storage: MediaStorage }) {
  const { uploads, storage } = deps
  // the upload operations are defined in contract.ts; this is the one route outside them
  return new Elysia({ name: 'uploads-routes' }).use(deps.guard)
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
