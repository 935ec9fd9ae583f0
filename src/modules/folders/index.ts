import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithBody } from '../../http/openapi'
import { noBody } from '../../http/json-body'
import { IdParams } from '../../http/schemas'
import { CreateFolderRequest, Folder, FolderList, UpdateFolderRequest } from './model'
import type { FoldersService } from './service'

export function foldersRoutes(deps: { guard: ReturnType<typeof authGuard>; folders: FoldersService }) {
  const { folders } = deps
  return new Elysia({ name: 'folders-routes' })
    .use(deps.guard)
    .get('/v1/folders', ({ principal }) => folders.list(requirePrincipal(principal)), {
      ...documented('listFolders', [], { 200: FolderList }),
    })
    .post('/v1/folders', ({ principal, body, set }) => {
      set.status = 201
      return folders.create(requirePrincipal(principal), body)
    }, {
      ...documentedWithBody('createFolder', [], CreateFolderRequest, { 201: Folder }),
    })
    .get('/v1/folders/:id', ({ principal, params }) => folders.get(requirePrincipal(principal), params.id), {
      params: IdParams,
      ...documented('getFolder', ['not_found'], { 200: Folder }),
    })
    .patch('/v1/folders/:id', ({ principal, params, body }) => folders.update(requirePrincipal(principal), params.id, body), {
      params: IdParams,
      ...documentedWithBody('updateFolder', ['not_found'], UpdateFolderRequest, { 200: Folder }),
    })
    .delete('/v1/folders/:id', ({ principal, params }) => {
      folders.delete(requirePrincipal(principal), params.id)
      return new Response(null, { status: 204 })
    }, {
      params: IdParams,
      ...noBody,
      ...documented('deleteFolder', ['not_found']),
    })
}
