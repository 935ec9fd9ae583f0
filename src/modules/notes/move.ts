import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import { ApiError, notFound } from '../../http/errors'
import { actorOf, type Principal } from '../../http/principal'
import type { AuditService } from '../audit/service'
import type { AuditBy } from '../audit/model'
import { roleAllows, type Role } from '../workspaces/model'
import { toNote } from './note-row'
import type { NoteRow } from './repo'
import type { Library } from '../library'

export type NoteMovesService = ReturnType<typeof createNoteMoves>

/** What a move gives back: the note as getNote answers it, in its new workspace, and its transcript version (the ETag). */
export interface MovedNote {
  note: ReturnType<typeof toNote>
  version: number
}

/**
 * moveNote (docs/decisions.md "Moving a note to another workspace"): a note leaves one workspace's
 * library for the same library (live or sandbox) of another workspace of the same person. What
 * belongs to the old workspace is let go in the same transaction: its folder, its tags, the links of
 * its speakers to the old workspace's remembered voices, its share links (revoked). The recording
 * follows the note (its upload row). Recorded as `note.moved` in both workspaces' audit logs.
 */
export function createNoteMoves(deps: {
  store: Pick<Store, 'transaction' | 'run' | 'sql'>
  clock: Clock
  /** a note of a library with its transcript (the notes service's `requireNote`: 404 when absent) */
  requireNote: (lib: Library, id: string) => Promise<NoteRow>
  /** the person's role in a workspace, null when they are not a member (workspaces repo `roleOf`) */
  roleOf: (workspaceId: string, personId: string) => Promise<Role | null>
  audit: Pick<AuditService, 'recordBy'>
}) {
  const { store, clock } = deps
  const sandbox = (p: Principal) => (p.sandbox ? 1 : 0)

  /** 404 unless the person is a member of the target; 403 naming the role unless they may write there. */
  async function checkTarget(p: Principal, target: string) {
    const role = await deps.roleOf(target, actorOf(p))
    if (role === null) {
      throw new ApiError('not_found', `No workspace with id ${target} is one of yours; list yours with GET /v1/workspaces and name one of them in workspaceId.`, {
        details: [{ field: 'workspaceId', issue: 'not one of your workspaces' }],
      })
    }
    if (!roleAllows(role, 'editor')) {
      throw new ApiError('insufficient_scope', `Your role in workspace ${target} is ${role}; moving a note into it needs editor or above. Ask an owner or admin of that workspace to change your role.`, {
        details: [{ field: 'workspaceId', issue: `${role} (needed: editor)` }],
      })
    }
  }

  return {
    async move(p: Principal, noteId: string, target: string, by: AuditBy): Promise<MovedNote> {
      if (target === p.accountId) {
        throw new ApiError('invalid_request', `Note ${noteId} is already in workspace ${target}; name another of your workspaces in workspaceId.`, {
          details: [{ field: 'workspaceId', issue: 'the note\'s own workspace' }],
        })
      }
      return store.transaction(async () => {
        const row = await deps.requireNote(p, noteId)
        await checkTarget(p, target)
        if (row.status === 'Summarizing') {
          throw new ApiError('conflict', `Note ${noteId} is still being processed (${row.processing_stage ?? 'processing'}); move it once getNoteStatus shows it Done or Error.`)
        }
        const at = clock.now().toISOString()
        const moved = await store.run(
          `UPDATE notes SET account_id = ?, folder_id = NULL, tags = NULL, updated_at = ${store.sql.greatest('?', 'date_created')}
           WHERE id = ? AND account_id = ? AND sandbox = ? AND status <> 'Summarizing'`,
          [target, at, noteId, p.accountId, sandbox(p)])
        if (moved === 0) throw notFound('note', noteId)
        const tagsRemoved = await store.run('DELETE FROM note_tags WHERE note_id = ?', [noteId])
        const speakersUnlinked = await store.run(
          `UPDATE note_speakers SET profile_id = NULL, suggested_profile_id = NULL, suggested_name = NULL, suggested_similarity = NULL
           WHERE note_id = ? AND (profile_id IS NOT NULL OR suggested_profile_id IS NOT NULL)`, [noteId])
        const sharesRevoked = await store.run('UPDATE note_shares SET revoked_at = ? WHERE note_id = ? AND revoked_at IS NULL', [at, noteId])
        await store.run('UPDATE uploads SET account_id = ? WHERE note_id = ?', [target, noteId])
        const details = { from: p.accountId, to: target, sandbox: p.sandbox, folderCleared: row.folder_id !== null, tagsRemoved, speakersUnlinked, sharesRevoked }
        for (const accountId of [p.accountId, target]) {
          await deps.audit.recordBy(by, { accountId, action: 'note.moved', target: { type: 'note', id: noteId }, details })
        }
        const after = await deps.requireNote({ accountId: target, sandbox: p.sandbox }, noteId)
        return { note: toNote(after), version: after.transcript_version ?? 0 }
      }, 'write')
    },
  }
}
