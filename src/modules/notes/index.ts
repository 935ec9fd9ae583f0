import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented, documentedWithBody, noBody } from '../../http/openapi'
import { IdParams, validatedQuery } from '../../http/schemas'
import { CreateNoteRequest, ListNotesQuery, Note, NoteList, NoteStatus, Transcript, UpdateNoteRequest } from './model'
import type { NotesService } from './service'

export function notesRoutes(deps: { guard: ReturnType<typeof authGuard>; notes: NotesService }) {
  const { notes } = deps
  return new Elysia({ name: 'notes-routes' })
    .use(deps.guard)
    .get('/v1/notes', ({ principal, query }) => notes.list(requirePrincipal(principal), query), {
      ...validatedQuery(ListNotesQuery),
      response: { 200: NoteList },
      ...documented('listNotes'),
    })
    .post('/v1/notes', ({ principal, body, set }) => {
      set.status = 201
      return notes.create(requirePrincipal(principal), body)
    }, {
      response: { 201: Note },
      ...documentedWithBody('createNote', [], CreateNoteRequest),
    })
    .get('/v1/notes/:id', ({ principal, params }) => notes.get(requirePrincipal(principal), params.id), {
      params: IdParams,
      response: { 200: Note },
      ...documented('getNote', ['not_found']),
    })
    .patch('/v1/notes/:id', ({ principal, params, body }) => notes.update(requirePrincipal(principal), params.id, body), {
      params: IdParams,
      response: { 200: Note },
      ...documentedWithBody('updateNote', ['not_found'], UpdateNoteRequest),
    })
    .delete('/v1/notes/:id', ({ principal, params, set }) => {
      notes.delete(requirePrincipal(principal), params.id)
      set.status = 204
      return new Response(null, { status: 204 })
    }, {
      params: IdParams,
      ...noBody,
      ...documented('deleteNote', ['not_found']),
    })
    .get('/v1/notes/:id/status', ({ principal, params }) => notes.status(requirePrincipal(principal), params.id), {
      params: IdParams,
      response: { 200: NoteStatus },
      ...documented('getNoteStatus', ['not_found']),
    })
    .get('/v1/notes/:id/transcript', ({ principal, params }) => notes.transcript(requirePrincipal(principal), params.id), {
      params: IdParams,
      response: { 200: Transcript },
      ...documented('getNoteTranscript', ['not_found', 'conflict']),
    })
}
