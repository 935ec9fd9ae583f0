/**
 * A note's transcript history (issue 31): every edit of the transcript is a revision (transcript-edits.ts
 * writes them); here they are listed, one is shown, and one is restored (a new revision whose
 * transcript is that one: undo is restoring the one before).
 */
import { ApiError } from '../../http/errors'
import { speakerNames } from '../../transcript/transcript'
import type { Library } from '../library'
import type { NotesService } from './service'
import { replay } from './revision-changes'
import type { RevisionSummaryRow, RevisionsRepo } from './revisions-repo'
import type { NoteTranscript } from './stored-transcript'
import type { EditBy } from './transcript-edits'

export type RevisionsService = ReturnType<typeof createRevisionsService>

const summary = (r: RevisionSummaryRow) => ({
  version: Number(r.version),
  actor: { type: r.actor_type, id: r.actor_id },
  operation: r.operation,
  createdAt: r.created_at,
  restoredFrom: r.restored_from === null || r.restored_from === undefined ? null : Number(r.restored_from),
})

/** The indices of `after`'s segments that differ from the segment at the same place in `before` (all of them when the lengths differ past it). */
function changedSegments(before: NoteTranscript['segments'], after: NoteTranscript['segments']): number[] {
  return (after ?? []).flatMap((s, i) => (JSON.stringify(s) === JSON.stringify(before?.[i]) ? [] : [i]))
}

export function createRevisionsService(deps: {
  repo: RevisionsRepo
  notes: Pick<NotesService, 'readableTranscript' | 'editTranscript'>
}) {
  /** Revision `version` of a readable note and its transcript, rebuilt from the nearest snapshot (revision-changes.ts). */
  async function requireRevision(lib: Library, id: string, version: number): Promise<{ row: RevisionSummaryRow; transcript: NoteTranscript }> {
    await deps.notes.readableTranscript(lib, id)
    const row = await deps.repo.get(id, version)
    if (!row) throw new ApiError('not_found', `Note ${id} has no revision ${version}; GET /v1/notes/${id}/revisions lists them (none until its transcript is first edited).`)
    return { row, transcript: replay(await deps.repo.chain(id, version)) }
  }

  return {
    /** The note's revisions, newest first (none until its transcript is first edited). */
    async list(lib: Library, id: string) {
      await deps.notes.readableTranscript(lib, id)
      return { data: (await deps.repo.list(id)).map(summary) }
    },

    /** The transcript at one version: its text, segments (with words) and speakers as named then. */
    async get(lib: Library, id: string, version: number) {
      const { row, transcript: t } = await requireRevision(lib, id, version)
      return { noteId: id, ...summary(row), transcript: t.text, segments: t.segments && [...t.segments], speakers: speakerNames(t.speakers) }
    },

    /**
     * A new revision whose transcript is version `version`'s: text, segments and speakers (a speaker's
     * remembered voice, and a voice suggested, kept only while the note's speaker of that label still
     * has it); the summary
     * marked stale. Honours If-Match as every edit does.
     */
    async restore(lib: Library, id: string, version: number, who: EditBy) {
      const then = (await requireRevision(lib, id, version)).transcript
      const saved = await deps.notes.editTranscript(lib, id, { ...who, restoredFrom: version }, now => {
        const voices = new Map(now.speakers.map(s => [s.label, s.profileId]))
        const offered = new Map(now.speakers.map(s => [s.label, s.suggestion?.profileId ?? null]))
        // a suggestion answered since (confirmed or dismissed) is not offered again, and one whose voice was forgotten is gone
        const speakers = then.speakers.map(s => ({
          ...s,
          profileId: voices.get(s.label) === s.profileId ? s.profileId : null,
          suggestion: s.suggestion && offered.get(s.label) === s.suggestion.profileId ? s.suggestion : null,
        }))
        return { transcript: { ...then, speakers }, fields: { summary_stale: 1 }, change: 'restore', segments: changedSegments(now.segments, then.segments) }
      })
      return { version: saved.version, restoredFrom: version }
    },
  }
}
