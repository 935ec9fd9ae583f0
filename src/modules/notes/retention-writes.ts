import type { Store } from '../../db/store'
import type { Library } from '../library'
import type { NotesRepo } from './repo'

/** What the retention policy (modules/retention) reads and writes of the notes; part of NotesService. */
export function createRetentionWrites(repo: NotesRepo, store: Pick<Store, 'transaction'>) {
  return {
    /** The retention sweep's page of a library's notes created before `cutoff` (NotesRepo.agedPage). */
    agedPage: (lib: Library, cutoff: string, after: { dateCreated: string; id: string } | null, limit: number, recordingsOnly: boolean) =>
      repo.agedPage(lib, cutoff, after, limit, recordingsOnly),

    /**
     * The retention policy removed a settled note's recording (its stored media are already deleted):
     * marks it at `at`, and makes `alsoWrite` (the audit event) in the same transaction. An upload still
     * awaiting its file counts as settled when created before `abandonedBefore`. False, nothing
     * written, when the note is gone, processing, or already marked.
     */
    markMediaRemoved: (lib: Library, id: string, at: string, abandonedBefore: string, alsoWrite: () => Promise<void>): Promise<boolean> => store.transaction(async () => {
      if (!(await repo.markMediaRemoved(lib, id, at, abandonedBefore))) return false
      await alsoWrite()
      return true
    }, 'write'),

    /**
     * The retention policy deletes a settled note (its stored media are already deleted): the row and
     * everything that hangs off it (body, speakers, search rows, upload, jobs), as the user's delete
     * does, with `alsoWrite` (the audit event) in the same transaction. An upload still awaiting its
     * file counts as settled when created before `abandonedBefore`. False, nothing written, when the
     * note is gone or processing.
     */
    deleteSettled: (lib: Library, id: string, abandonedBefore: string, alsoWrite: () => Promise<void>): Promise<boolean> => store.transaction(async () => {
      if (!(await repo.deleteSettled(lib, id, abandonedBefore))) return false
      await alsoWrite()
      return true
    }, 'write'),
  }
}
