import { t } from 'elysia'
import { operationDefiner } from '../../http/contract'
import { Answer } from '../../http/answer'
import { IdParams } from '../../http/schemas'
import { auditBy, isOwnCredential } from '../audit/by'
import { ApiError } from '../../http/errors'
import { transcriptETag } from './transcript-edits'
import { Note } from './model'
import type { NoteMovesService } from './move'

const defineOperation = operationDefiner<{ noteMoves: NoteMovesService }>()

const MoveNoteRequest = t.Object(
  { workspaceId: t.String({ minLength: 1, maxLength: 200, error: 'must be the id of one of your workspaces (GET /v1/workspaces lists them)', description: 'the workspace the note goes to' }) },
  { additionalProperties: false, title: 'MoveNoteRequest' },
)

export const moveNote = defineOperation({
  id: 'moveNote', method: 'POST', path: '/v1/notes/:id/move', tag: 'Notes',
  summary: 'Move a note to another of your workspaces',
  description: 'Moves the note, with its transcript, summary, recording and revisions, to the same library (live or sandbox) of another workspace you are a member of, where your role must be editor or above (404 for a workspace that is not one of yours, 403 naming your role). What belonged to the old workspace stays there: the note leaves its folder (top level), its tags and the links of its speakers to remembered voices are dropped (the names stay), and its share links are revoked. 409 while the note is still being processed. Recorded as `note.moved` in both workspaces\' audit logs. Answers the note as getNote does.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  body: MoveNoteRequest,
  responses: { 200: Note },
  errors: ['not_found', 'conflict'],
}, async ({ id, workspaceId }, caller, { noteMoves }) => {
  // where a note lives, and so who can read it, is the person's to change, not an application's
  if (!isOwnCredential(caller.principal)) throw new ApiError('insufficient_scope', 'An OAuth access token or ID token cannot move a note to another workspace (its members would read it): a person does it in the browser or with an API key of their own (svc_live_…).')
  const { note, version } = await noteMoves.move(caller.principal, id, workspaceId, auditBy(caller))
  return new Answer(note, { headers: { etag: transcriptETag(version) } })
})
