import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithBody, noBody } from '../../http/openapi'
import { IdParams } from '../../http/schemas'
import { CreateFolderRequest, Folder, FolderList, UpdateFolderRequest } from './model'
import type { FoldersService } from './service'

export function foldersRoutes(deps: { guard: ReturnType<typeof authGuard>; folders: FoldersService }) {
  const { folders } = deps
  return new Elysia({ name: 'folders-routes' })
    .use(deps.guard)
    .get('/v1/folders', ({ principal }) => folders.list(requirePrincipal(principal)), {
      response: { 200: FolderList },
      ...documented('listFolders'),
    })
    .post('/v1/folders', ({ principal, body, set }) => {
      set.status = 201
      return folders.create(requirePrincipal(principal), body)
    }, {
      response: { 201: Folder },
      ...documentedWithBody('createFolder', [], CreateFolderRequest),
    })
    .get('/v1/folders/:id', ({ principal, params }) => folders.get(requirePrincipal(principal), params.id), {
      params: IdParams,
      response: { 200: Folder },
      ...documented('getFolder', ['not_found']),
    })
    .patch('/v1/folders/:id', ({ principal, params, body }) => folders.update(requirePrincipal(principal), params.id, body), {
      params: IdParams,
      response: { 200: Folder },
      ...documentedWithBody('updateFolder', ['not_found'], UpdateFolderRequest),
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
