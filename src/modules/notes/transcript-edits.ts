import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import { ApiError, notFound } from '../../http/errors'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { Library } from '../library'
import type { NoteFields, NoteRow, NotesRepo } from './repo'
import type { RevisionsRepo } from './revisions-repo'
import { changeOf, snapshotJson, SNAPSHOT_EVERY } from './revision-changes'
import { storedTranscript, type NoteTranscript } from './stored-transcript'
import { checkReadable } from './transcript-reads'

/** Whether two transcripts' segments are the same (for an edit kept as a snapshot, whose change is not computed). */
const sameSegments = (a: NoteTranscript, b: NoteTranscript) => a.segments === b.segments || JSON.stringify(a.segments) === JSON.stringify(b.segments)

/** What kind of change an edit is, as the `note.updated` webhook event names it. */
export type TranscriptChange = 'text' | 'split' | 'merge' | 'reassign' | 'replace' | 'restore' | 'speaker'

/** A transcript saved by an edit (given to `onEdited` in the edit's transaction: the webhook outbox). */
export interface TranscriptEdited {
  accountId: string
  sandbox: boolean
  noteId: string
  version: number
  change: TranscriptChange
  /** the indices (in the new transcript) of the segments the change touched */
  segments: number[]
  /** the note's tags as JSON (notes.tags), null for none */
  tags?: string | null
}

/**
 * The next transcript an edit makes, what else of the note changes with it (a summary's names), and
 * what kind of change it is and which segments (of the new transcript) it touched.
 */
interface TranscriptEdit {
  transcript: NoteTranscript
  fields?: NoteFields
  change: TranscriptChange
  segments: number[]
}

/** Who edits, by which operation, and the version they read (`If-Match`; absent: the edit applies to whatever is current). */
export interface EditBy {
  by: AuditBy
  operation: string
  ifMatch?: string | null
  /** a restore: the version it brings back (kept on the revision as `restoredFrom`) */
  restoredFrom?: number
}

/** A transcript version as an ETag (a strong one: the transcript at a version never changes). */
export const transcriptETag = (version: number) => `"${version}"`

/** The version an `If-Match` names: `"3"`, `3` or `W/"3"`; `*` matches any; null for anything else (a 412). */
function matched(ifMatch: string, current: number): boolean {
  return ifMatch.split(',').some(tag => {
    const t = tag.trim()
    return t === '*' || t.replace(/^W\//, '').replace(/^"(.*)"$/, '$1') === String(current)
  })
}

/** 412 with the current version when `If-Match` names another version of the note's transcript. */
export function checkIfMatch(id: string, ifMatch: string | null | undefined, current: number): void {
  if (ifMatch && !matched(ifMatch, current)) {
    throw new ApiError('precondition_failed', `The transcript of note ${id} is at version ${current}, not ${ifMatch}: someone changed it since you read it. Read it again (GET /v1/notes/${id}/transcript, ETag ${transcriptETag(current)}) and send your change again.`, {
      details: [{ field: 'If-Match', issue: `current version is ${current}` }],
      headers: { etag: transcriptETag(current) },
    })
  }
}

export type TranscriptEdits = ReturnType<typeof createTranscriptEdits>

/**
 * A change of a note's transcript: read, changed by a pure function of src/transcript/edits.ts, saved
 * through the one save path with a revision and an audit record (`note.transcript_edited`); part of
 * NotesService, and what the speakers' changes are made with.
 */
export function createTranscriptEdits(deps: {
  repo: NotesRepo
  revisions: RevisionsRepo
  store: Pick<Store, 'transaction'>
  clock: Clock
  audit?: Pick<AuditService, 'recordBy'>
  /** a transcript was edited; called in the edit's transaction, so the two commit together (the webhook outbox) */
  onEdited?: (e: TranscriptEdited) => Promise<void>
}) {
  return {
    /**
     * The transcript of a readable note changed by `edit`, which is given the stored transcript and the
     * note's row and returns the next transcript (or throws the request's error: nothing is written);
     * saved with the note's `updatedAt` now, a new revision (the note's version raised by one), an
     * audit record and `onEdited` (the `note.updated` webhook event's outbox rows), all in one
     * transaction: the event is sent only after the edit commits, and never for one rolled back. With `If-Match` naming another version than the current,
     * 412 with the current one. Returns what was saved and its version.
     */
    editTranscript(lib: Library, id: string, who: EditBy, edit: (t: NoteTranscript, note: NoteRow) => TranscriptEdit | Promise<TranscriptEdit>): Promise<NoteTranscript & { version: number }> {
      return deps.store.transaction(async () => {
        // first the version (the row's lock: a concurrent edit waits here), then the note and its
        // transcript as now saved, read and parsed once
        const version = await deps.revisions.nextVersion(id, lib.accountId, lib.sandbox)
        if (version === null) throw notFound('note', id)
        const note = checkReadable(id, await deps.repo.get(lib, id))
        const current = version - 1
        checkIfMatch(id, who.ifMatch, current)
        const rows = await deps.repo.speakersOf(note.id)
        const before = storedTranscript(note, rows)
        const { transcript, fields, change, segments } = await edit(before, note)
        const at = deps.clock.now().toISOString()
        const changed = changeOf(before, transcript)
        const segmentsChanged = changed ? changed.before.length + changed.after.length > 0 : !sameSegments(before, transcript)
        // serialised once: the note's column and, when this revision is a snapshot, the revision's
        const segmentsJson = segmentsChanged && transcript.segments ? JSON.stringify(transcript.segments) : note.transcript_segments ?? null
        await deps.repo.saveEdit(note.id, { text: before.text, rows }, transcript, { changed: segmentsChanged, json: transcript.segments ? segmentsJson : null }, { ...fields, updated_at: at })
        if (current === 0) await deps.revisions.insert({ note_id: id, version: 0, actor_type: null, actor_id: null, operation: 'transcribed', created_at: note.updated_at, restored_from: null, transcript: snapshotJson(before, note.transcript_segments), changes: null })
        const snapshot = changed === null || version % SNAPSHOT_EVERY === 0
        await deps.revisions.insert({
          note_id: id, version, actor_type: who.by.actor.type, actor_id: who.by.actor.id ?? null, operation: who.operation, created_at: at, restored_from: who.restoredFrom ?? null,
          transcript: snapshot ? snapshotJson(transcript, transcript.segments ? segmentsJson : null) : null,
          changes: snapshot ? null : JSON.stringify(changed),
        })
        await deps.audit?.recordBy(who.by, { accountId: lib.accountId, action: 'note.transcript_edited', target: { type: 'note', id }, details: { operation: who.operation, version, sandbox: lib.sandbox } })
        await deps.onEdited?.({ accountId: lib.accountId, sandbox: lib.sandbox, noteId: id, version, change, segments, tags: note.tags })
        return { ...transcript, version }
      })
    },
  }
}
