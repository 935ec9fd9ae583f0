import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithQuery, documentedWithBody } from '../../http/openapi'
import { noBody } from '../../http/json-body'
import { jsonText } from '../../http/responses'
import { IdParams, queryValidator } from '../../http/schemas'
import { CreateNoteRequest, ListNotesQuery, Note, NoteList, NoteStatus, Transcript, UpdateNoteRequest } from './model'
import type { NotesService } from './service'

const listQuery = queryValidator(ListNotesQuery)

export function notesRoutes(deps: { guard: ReturnType<typeof authGuard>; notes: NotesService }) {
  const { notes } = deps
  return new Elysia({ name: 'notes-routes' })
    .use(deps.guard)
    .get('/v1/notes', ({ principal, query, set }) => jsonText(set, notes.listJson(requirePrincipal(principal), listQuery(query))), {
      ...documentedWithQuery('listNotes', [], { 200: NoteList }, ListNotesQuery),
    })
    .post('/v1/notes', ({ principal, body, set }) => {
      set.status = 201
      return notes.create(requirePrincipal(principal), body)
    }, {
      ...documentedWithBody('createNote', [], CreateNoteRequest, { 201: Note }),
    })
    .get('/v1/notes/:id', ({ principal, params }) => notes.get(requirePrincipal(principal), params.id), {
      params: IdParams,
      ...documented('getNote', ['not_found'], { 200: Note }),
    })
    .patch('/v1/notes/:id', ({ principal, params, body }) => notes.update(requirePrincipal(principal), params.id, body), {
      params: IdParams,
      ...documentedWithBody('updateNote', ['not_found'], UpdateNoteRequest, { 200: Note }),
    })
    .delete('/v1/notes/:id', async ({ principal, params, set }) => {
      await notes.delete(requirePrincipal(principal), params.id)
      set.status = 204
      return new Response(null, { status: 204 })
    }, {
      params: IdParams,
      ...noBody,
      ...documented('deleteNote', ['not_found']),
    })
    .get('/v1/notes/:id/status', ({ principal, params }) => notes.status(requirePrincipal(principal), params.id), {
      params: IdParams,
      ...documented('getNoteStatus', ['not_found'], { 200: NoteStatus }),
    })
    .get('/v1/notes/:id/transcript', ({ principal, params }) => notes.transcript(requirePrincipal(principal), params.id), {
      params: IdParams,
      ...documented('getNoteTranscript', ['not_found', 'conflict'], { 200: Transcript }),
    })
}
