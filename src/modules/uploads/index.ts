import { Elysia, t } from 'elysia'
import type { authGuard } from '../../http/auth'
import { noBody } from '../../http/json-body'
import { IdParams } from '../../http/schemas'
import type { UploadsService } from './service'

export function uploadsRoutes(deps: { guard: ReturnType<typeof authGuard>; uploads: UploadsService }) {
  const { uploads } = deps
  // the upload operations are defined in contract.ts; this is the one route outside them
  return new Elysia({ name: 'uploads-routes' }).use(deps.guard)
    // The signed PUT target of a storage that receives uploads itself (disk): not an operation of the
    // API but where the uploadUrl of createUpload points. Authorised by its signature, not a bearer;
    // the body is streamed to storage.
    .put('/v1/uploads/:id/file', async ({ params, query, request }) => uploads.receiveFile(params.id, query, request), {
      params: IdParams,
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      ...noBody,
    })
}
