import { t } from 'elysia'
import { operationDefiner } from '../../http/contract'
import { Answer } from '../../http/answer'
import { Integer, Nullable } from '../../http/schemas'
import { editBy } from './contract'
import type { RevisionsService } from './revisions'
import { transcriptETag } from './transcript-edits'

const defineOperation = operationDefiner<{ revisions: RevisionsService }>()

const RevisionParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }),
  version: t.String({ pattern: '^[0-9]{1,9}$', description: 'the transcript version (0: as transcribed)', error: 'must be a version number from 0' }),
})

const RevisionFields = {
  version: Integer(),
  actor: t.Object({ type: Nullable(t.String()), id: Nullable(t.String()) }, { description: 'who made it, as the audit log names them (null for version 0, the transcript as transcribed)' }),
  operation: t.String({ description: 'the operation that made it: transcribed, updateNoteSegment, updateNoteSpeaker, restoreNoteRevision' }),
  createdAt: t.String(),
  restoredFrom: Nullable(Integer({ description: 'for a restore, the version it brought back (undo and redo in the browser are restores); null for any other edit' })),
}

const RevisionList = t.Object({ data: t.Array(t.Object(RevisionFields, { title: 'Revision' })) }, { title: 'RevisionList' })

const RevisionTranscript = t.Object({
  noteId: t.String(),
  ...RevisionFields,
  transcript: t.String(),
  segments: Nullable(t.Array(t.Object({ start: t.Number(), end: t.Number(), text: t.String() }, { additionalProperties: true }))),
  speakers: t.Array(t.Object({ id: t.String(), name: t.String() })),
}, { title: 'RevisionTranscript' })

const Restored = t.Object({ version: Integer({ description: 'the new version, whose transcript is the restored one' }), restoredFrom: Integer() }, { title: 'RevisionRestored' })

const listNoteRevisions = defineOperation({
  id: 'listNoteRevisions', method: 'GET', path: '/v1/notes/:id/revisions', tag: 'Notes',
  summary: 'The history of a note\'s transcript',
  description: 'Every version of the transcript a person made, newest first: its number, who made it, by which operation and when. Version 0 is the transcript as transcribed (listed once the transcript is first edited). 409 while the note is still processing.',
  scopes: ['notes:read'], credits: 0,
  params: t.Object({ id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }) }),
  responses: { 200: RevisionList },
  errors: ['not_found', 'conflict'],
}, ({ id }, { principal }, { revisions }) => revisions.list(principal, id))

const getNoteRevision = defineOperation({
  id: 'getNoteRevision', method: 'GET', path: '/v1/notes/:id/revisions/:version', tag: 'Notes',
  summary: 'A note\'s transcript at one version',
  description: 'The text, timed segments (with words) and speakers the transcript had at `version`.',
  scopes: ['notes:read'], credits: 0,
  params: RevisionParams,
  responses: { 200: RevisionTranscript },
  errors: ['not_found', 'conflict'],
}, ({ id, version }, { principal }, { revisions }) => revisions.get(principal, id, Number(version)))

const restoreNoteRevision = defineOperation({
  id: 'restoreNoteRevision', method: 'POST', path: '/v1/notes/:id/revisions/:version/restore', tag: 'Notes',
  summary: 'Restore a version of a note\'s transcript',
  description: 'Makes a new version whose transcript is the one at `version` (undo: restore the version before the last); the text, search and subtitles follow, the summary is marked stale. With `If-Match` (the transcript\'s ETag), 412 when the transcript changed since; without it, the restore applies.',
  scopes: ['notes:write'], credits: 0,
  params: RevisionParams,
  responses: { 200: Restored },
  errors: ['not_found', 'conflict', 'precondition_failed'],
}, async ({ id, version }, caller, { revisions }) => {
  const r = await revisions.restore(caller.principal, id, Number(version), editBy(caller, 'restoreNoteRevision'))
  return new Answer(r, { headers: { etag: transcriptETag(r.version) } })
})

export const revisionsOperations = [listNoteRevisions, getNoteRevision, restoreNoteRevision] as const
