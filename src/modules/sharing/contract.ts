import { operationDefiner } from '../../http/contract'
import { IdParams } from '../../http/schemas'
import { auditBy } from '../audit/by'
import { CreatedNoteShare, CreateNoteShareRequest, NoteShareList, ShareParams } from './model'
import type { SharingService } from './service'

const defineOperation = operationDefiner<{ sharing: SharingService }>()

const createNoteShare = defineOperation({
  id: 'createNoteShare', method: 'POST', path: '/v1/notes/:id/shares', tag: 'Notes',
  summary: 'Make a share link of a note',
  description: 'A read-only link to the note for someone without an account: its transcript with speakers and times always; the summary, the speakers\' names, the recording and transcript downloads as chosen; an optional expiry and passphrase. The answer\'s `url` holds the token, shown only now. 403 `sharing_disabled` when the instance turned sharing off (NOTESVC_SHARING=off).',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  body: CreateNoteShareRequest,
  responses: { 201: CreatedNoteShare },
  errors: ['not_found', 'sharing_disabled'],
}, ({ id, ...body }, caller, { sharing }) => sharing.create(caller.principal, id, body, auditBy(caller)))

const listNoteShares = defineOperation({
  id: 'listNoteShares', method: 'GET', path: '/v1/notes/:id/shares', tag: 'Notes',
  summary: 'List a note\'s share links',
  description: 'Every share link of the note, newest first, revoked and expired ones included, with how often each was opened (`openCount`, `lastOpenedAt`); never their tokens.',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: NoteShareList },
  errors: ['not_found'],
}, ({ id }, { principal }, { sharing }) => sharing.list(principal, id))

const revokeNoteShare = defineOperation({
  id: 'revokeNoteShare', method: 'DELETE', path: '/v1/notes/:id/shares/:shareId', tag: 'Notes',
  summary: 'Revoke a share link',
  description: 'The link stops opening at once: its page answers 404, as an unknown link\'s does. It stays in the list with `revokedAt`.',
  scopes: ['notes:write'], credits: 0,
  params: ShareParams,
  responses: { 204: null },
  errors: ['not_found'],
}, ({ id, shareId }, caller, { sharing }) => sharing.revoke(caller.principal, id, shareId, auditBy(caller)))

export const sharingOperations = [createNoteShare, listNoteShares, revokeNoteShare] as const
