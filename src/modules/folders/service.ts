import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { notFound } from '../../http/errors'
import type { Library } from '../library'
import type { CreateFolderRequest, Folder, UpdateFolderRequest } from './model'
import type { FolderRow, FoldersRepo } from './repo'
import type { AuditService } from '../audit/service'
import type { AuditBy } from '../audit/model'

export type FoldersService = ReturnType<typeof createFoldersService>

function toFolder(r: FolderRow): Folder {
  return { id: r.id, name: r.name, color: r.color, createdAt: r.created_at, updatedAt: r.updated_at }
}

/**
 * Whether a folder exists in a library, from the folders repo alone: the check the notes service makes
 * before filing a note. It exists before the folders service, which needs the notes service. `lock`:
 * inside the filing's transaction, the folder cannot be deleted until it ends.
 */
export function folderExistsIn(repo: FoldersRepo) {
  return async (lib: Library, id: string, lock = false) => (await repo.get(lib, id, lock ? 'share' : null)) !== null
}

export function createFoldersService(deps: {
  repo: FoldersRepo
  clock: Clock
  ids: IdGenerator
  /** the database, for the transactions of read-then-write operations */
  store: Pick<Store, 'transaction'>
  /** moves the folder's notes to the top level (the notes service), inside the deletion transaction */
  unfileNotes: (folderId: string) => Promise<number>
  /** the audit log: deletions are recorded with who made them */
  audit?: Pick<AuditService, 'recordBy'>
}) {
  const { repo, clock, ids, store } = deps

  /** The folder, or 404; `lock`: inside a transaction, hold the row until it ends. */
  async function requireFolder(lib: Library, id: string, lock = false): Promise<FolderRow> {
    const row = await repo.get(lib, id, lock ? 'update' : null)
    if (!row) throw notFound('folder', id)
    return row
  }

  return {
    exists: folderExistsIn(repo),
    list: async (lib: Library) => ({ data: (await repo.list(lib)).map(toFolder) }),
    get: async (lib: Library, id: string) => toFolder(await requireFolder(lib, id)),

    async create(lib: Library, body: CreateFolderRequest): Promise<Folder> {
      const at = clock.now().toISOString()
      const row: FolderRow = { id: ids.next('fld'), account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, name: body.name, color: body.color ?? null, created_at: at, updated_at: at }
      await repo.insert(row)
      return toFolder(row)
    },

    update(lib: Library, id: string, body: UpdateFolderRequest): Promise<Folder> {
      return store.transaction(async () => {
        await requireFolder(lib, id, true)
        const fields: Partial<Pick<FolderRow, 'name' | 'color'>> = {}
        if (body.name !== undefined) fields.name = body.name
        if (body.color !== undefined) fields.color = body.color
        await repo.update(lib, id, fields, clock.now().toISOString())
        return toFolder(await requireFolder(lib, id))
      })
    },

    /**
     * Deletes the folder and moves its notes to the top level, all or nothing: one transaction, which
     * the notes repository's update joins (an ambient transaction of the store), with the audit
     * log's record of it (`by`: who, from where).
     */
    async delete(lib: Library, id: string, by: AuditBy): Promise<void> {
      await store.transaction(async () => {
        await requireFolder(lib, id, true)
        await deps.unfileNotes(id)
        await repo.delete(lib, id)
        await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'folder.deleted', target: { type: 'folder', id }, details: { sandbox: lib.sandbox } })
      })
    },
  }
}
