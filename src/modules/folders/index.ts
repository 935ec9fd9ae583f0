import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { createFolder, deleteFolder, getFolder, listFolders, updateFolder } from './contract'
import type { FoldersService } from './service'

export function foldersRoutes(deps: { guard: ReturnType<typeof authGuard>; folders: FoldersService }) {
  const { folders } = deps
  return contractRoutes('folders-routes', deps.guard, [
    route(listFolders, ({ principal }) => folders.list(principal)),
    route(createFolder, ({ principal, body, set }) => {
      set.status = 201
      return folders.create(principal, body)
    }),
    route(getFolder, ({ principal, params }) => folders.get(principal, params.id)),
    route(updateFolder, ({ principal, params, body }) => folders.update(principal, params.id, body)),
    route(deleteFolder, async ({ principal, params }) => {
      await folders.delete(principal, params.id)
      return new Response(null, { status: 204 })
    }),
  ])
}
