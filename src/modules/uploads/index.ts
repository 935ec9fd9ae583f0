import { t } from 'elysia'
import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { noBody } from '../../http/json-body'
import { withCreditsRemaining } from '../../http/responses'
import { IdParams } from '../../http/schemas'
import { completeUpload, createUpload } from './contract'
import type { UploadsService } from './service'

export function uploadsRoutes(deps: { guard: ReturnType<typeof authGuard>; uploads: UploadsService }) {
  const { uploads } = deps
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
    // The signed PUT target of a storage that receives uploads itself (disk): not an operation of the
    // API but where the uploadUrl of createUpload points. Authorised by its signature, not a bearer;
    // the body is streamed to storage.
    .put('/v1/uploads/:id/file', async ({ params, query, request }) => uploads.receiveFile(params.id, query, request), {
      params: IdParams,
      query: t.Object({ expires: t.Optional(t.String()), signature: t.Optional(t.String()) }),
      ...noBody,
    })
}
