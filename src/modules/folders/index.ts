import type { authGuard } from '../../http/auth'
import { contractRoutes, route } from '../../http/contract'
import { createFolder, deleteFolder, getFolder, listFolders, updateFolder } from './contract'
import type { FoldersService } from './service'
import type { AuditService } from '../audit/service'
import { auditBy } from '../audit/by'

export function foldersRoutes(deps: { guard: ReturnType<typeof authGuard>; folders: FoldersService; audit: AuditService }) {
  const { folders, audit } = deps
  return contractRoutes('folders-routes', deps.guard, [
    route(listFolders, ({ principal }) => folders.list(principal)),
    route(createFolder, ({ principal, body, set }) => {
      set.status = 201
      return folders.create(principal, body)
    }),
    route(getFolder, ({ principal, params }) => folders.get(principal, params.id)),
    route(updateFolder, ({ principal, params, body }) => folders.update(principal, params.id, body)),
    route(deleteFolder, async ({ principal, params, request, server }) => {
      await folders.delete(principal, params.id, () => audit.recordBy(auditBy(principal, server, request), {
        accountId: principal.accountId, action: 'folder.deleted', target: { type: 'folder', id: params.id }, details: { sandbox: principal.sandbox },
      }))
      return new Response(null, { status: 204 })
    }),
  ])
}
