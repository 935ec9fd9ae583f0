import type { authGuard } from '../../http/auth'
import { contractRoutes, queryReader, route, type Reply } from '../../http/contract'
import { attachment } from '../../http/download'
import { jsonText, withCreditsRemaining } from '../../http/responses'
import type { ProcessingService } from '../processing/service'
import { askNoteQuestion, createNote, deleteNote, deleteSpeakerProfile, getNote, getNoteStatus, getNoteTranscript, listNotes, listNoteSpeakers, listSpeakerProfiles, updateNote, updateNoteSegment, updateNoteSpeaker } from './contract'
import type { SpeakersService } from './speakers'
import type { NotesService } from './service'
import { exportTranscript } from './transcript-export'
import type { AuditService } from '../audit/service'
import { auditBy } from '../audit/by'

const listQuery = queryReader(listNotes)
const transcriptQuery = queryReader(getNoteTranscript)
const profilesQuery = queryReader(listSpeakerProfiles)

export function notesRoutes(deps: { guard: ReturnType<typeof authGuard>; notes: NotesService; processing: ProcessingService; speakers: SpeakersService; audit: AuditService }) {
  const { notes, processing, speakers, audit } = deps
  return contractRoutes('notes-routes', deps.guard, [
    // `alongside`: the notes' revision counter as admission's rate-limit statement read it (PostgreSQL;
    // the composition root asks for it), with nothing written in between
    route(listNotes, async ({ principal, query, set, alongside }) => {
      const q = listQuery(query)
      // a kept page is answered without a turn through promises when that can be told at once
      return jsonText(set, notes.keptListJson(principal, q, alongside) ?? (await notes.listJson(principal, q, alongside)))
    }),
    route(createNote, ({ principal, body, set }) => {
      set.status = 201
      return notes.create(principal, body)
    }),
    route(getNote, ({ principal, params }) => notes.get(principal, params.id)),
    route(updateNote, ({ principal, params, body }) => notes.update(principal, params.id, body)),
    route(deleteNote, async ({ principal, params, set, request, server }) => {
      await notes.delete(principal, params.id, () => audit.recordBy(auditBy(principal, server, request), {
        accountId: principal.accountId, action: 'note.deleted', target: { type: 'note', id: params.id }, details: { sandbox: principal.sandbox },
      }))
      set.status = 204
      return new Response(null, { status: 204 })
    }),
    route(getNoteStatus, ({ principal, params }) => notes.status(principal, params.id)),
    route(getNoteTranscript, async ({ principal, params, query, set, request, server }) => {
      const { format } = transcriptQuery(query)
      // recorded once the transcript is known to be readable (a 404 or 409 exports nothing)
      const exported = () => audit.recordBy(auditBy(principal, server, request), {
        accountId: principal.accountId, action: 'note.transcript_exported', target: { type: 'note', id: params.id }, details: { format: format ?? 'json', sandbox: principal.sandbox },
      })
      if (format === undefined) {
        const transcript = await notes.transcript(principal, params.id)
        await exported()
        return transcript
      }
      const source = await notes.transcriptWithTimes(principal, params.id)
      const out = exportTranscript(source, format)
      await exported()
      set.headers['content-type'] = out.contentType
      set.headers['content-disposition'] = attachment(source.title, out.extension, source.noteId)
      return out.body as Reply<typeof getNoteTranscript>
    }),
    // Answered by the processing service (it runs the model and charges), asked of a note.
    route(askNoteQuestion, async ({ principal, params, body, set }) => withCreditsRemaining(set, await processing.askNoteQuestion(principal, params.id, body.question))),
    route(listNoteSpeakers, async ({ principal, params }) => ({ data: await speakers.list(principal, params.id) })),
    route(updateNoteSpeaker, ({ principal, params, body }) => speakers.update(principal, params.id, params.speakerId, body)),
    route(updateNoteSegment, async ({ principal, params, body }) => ({ data: await speakers.reassign(principal, params.id, Number(params.index), body.speaker) })),
    route(listSpeakerProfiles, ({ principal, query }) => speakers.profiles(principal, profilesQuery(query))),
    route(deleteSpeakerProfile, async ({ principal, params, set }) => {
      await speakers.deleteProfile(principal, params.id)
      set.status = 204
      return new Response(null, { status: 204 })
    }),
  ])
}
