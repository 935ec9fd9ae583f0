import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { notFound } from '../../http/errors'
import type { Library } from '../library'
import type { CreateFolderRequest, Folder, UpdateFolderRequest } from './model'
import type { FolderRow, FoldersRepo } from './repo'

export type FoldersService = ReturnType<typeof createFoldersService>

function toFolder(r: FolderRow): Folder {
  return { id: r.id, name: r.name, color: r.color, createdAt: r.created_at, updatedAt: r.updated_at }
}

/**
 * Whether a folder exists in a library, from the folders repo alone: the check the notes service makes
 * before filing a note. It exists before the folders service, which needs the notes service.
 */
export function folderExistsIn(repo: FoldersRepo) {
  return (lib: Library, id: string) => repo.get(lib, id) !== null
}

export function createFoldersService(deps: {
  repo: FoldersRepo
  clock: Clock
  ids: IdGenerator
  transaction: <T>(fn: () => T) => T
  /** moves the folder's notes to the top level (the notes service), inside the deletion transaction */
  unfileNotes: (folderId: string) => number
}) {
  const { repo, clock, ids } = deps

  function requireFolder(lib: Library, id: string): FolderRow {
    const row = repo.get(lib, id)
    if (!row) throw notFound('folder', id)
    return row
  }

  return {
    exists: folderExistsIn(repo),
    list: (lib: Library) => ({ data: repo.list(lib).map(toFolder) }),
    get: (lib: Library, id: string) => toFolder(requireFolder(lib, id)),

    create(lib: Library, body: CreateFolderRequest): Folder {
      const at = clock.now().toISOString()
      const row: FolderRow = { id: ids.next('fld'), account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, name: body.name, color: body.color ?? null, created_at: at, updated_at: at }
      repo.insert(row)
      return toFolder(row)
    },

    update(lib: Library, id: string, body: UpdateFolderRequest): Folder {
      return deps.transaction(() => {
        requireFolder(lib, id)
        const fields: Partial<Pick<FolderRow, 'name' | 'color'>> = {}
        if (body.name !== undefined) fields.name = body.name
        if (body.color !== undefined) fields.color = body.color
        repo.update(lib, id, fields, clock.now().toISOString())
        return toFolder(requireFolder(lib, id))
      })
    },

    /** Deletes the folder and moves its notes to the top level, all or nothing. */
    delete(lib: Library, id: string) {
      deps.transaction(() => {
        requireFolder(lib, id)
        deps.unfileNotes(id)
        repo.delete(lib, id)
      })
    },
  }
}
