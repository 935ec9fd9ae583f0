import { operationDefiner } from '../../http/contract'
import { Answer, charged } from '../../http/answer'
import { attachment } from '../../http/download'
import { IdParams } from '../../http/schemas'
import { t } from 'elysia'
import type { Static } from '@sinclair/typebox'
import { auditBy } from '../audit/by'
import type { Caller } from '../../http/caller'
import { transcriptETag, type EditBy } from './transcript-edits'
import { toNote } from './note-row'
import { moveNote } from './move-contract'
import type { ProcessingService } from '../processing/service'
import { OpenAiDiarizedTranscription } from '../openai/model'
import type { NotesService } from './service'
import type { SegmentTextService } from './segment-text'
import type { SpeakersService } from './speakers'
import { Answer as AnswerSchema, CreateNoteRequest, ListSpeakerProfilesQuery, NoteSpeaker, NoteSpeakerList, SegmentParams, SpeakerParams, SpeakerProfile, SpeakerSuggestionAnswer, SpeakerProfileList, UpdateNoteSpeakerRequest, UpdateSegmentRequest, UpdateSegmentResponse, ListNotesQuery, Note, NoteList, NoteStatus, QuestionRequest, Transcript, TranscriptQuery, TranscriptVerbose, UpdateNoteRequest } from './model'

/** What the notes operations call: the library, its speakers, and processing (questions are answered by a model). */
interface NotesServices {
  notes: NotesService
  speakers: SpeakersService
  processing: ProcessingService
  segmentText: SegmentTextService
}

const defineOperation = operationDefiner<NotesServices>()

/** Who edits a transcript, by which operation, and the version they read (If-Match). */
export const editBy = (caller: Caller, operation: string): EditBy => ({ by: auditBy(caller), operation, ifMatch: caller.ifMatch() })

export const listNotes = defineOperation({
  id: 'listNotes', method: 'GET', path: '/v1/notes', tag: 'Notes',
  summary: 'List notes, newest first',
  description: 'A page of the library\'s notes, newest first by `dateCreated` (ties by id), optionally filtered by folder, status, type or last change. `pagination.hasMore` says whether another page exists. With `q`, a search: only the notes whose title, summary or transcript hold every word of `q`, most relevant first (ties newest first), each with a `snippet`; the filters and `limit`/`offset` apply as to the list.',
  scopes: ['notes:read'], credits: 0,
  query: ListNotesQuery,
  responses: { 200: NoteList },
}, (q, { principal, alongside }, { notes }) =>
  // `alongside`: the notes' revision counter as admission's rate-limit statement read it (PostgreSQL),
  // with nothing written in between; a kept page is answered at once, without a turn through promises
  notes.keptListJson(principal, q, alongside) ?? notes.listJson(principal, q, alongside))

const createNote = defineOperation({
  id: 'createNote', method: 'POST', path: '/v1/notes', tag: 'Notes',
  summary: 'Create a note from text',
  description: 'Saves text or markdown as a finished note: the content becomes its summary and its transcript.',
  scopes: ['notes:write'], credits: 0,
  body: CreateNoteRequest,
  responses: { 201: Note },
}, (body, { principal }, { notes }) => notes.create(principal, body))

const getNote = defineOperation({
  id: 'getNote', method: 'GET', path: '/v1/notes/:id', tag: 'Notes',
  summary: 'Get a note',
  description: 'The whole note: transcript, summary and structured content.',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: Note },
  errors: ['not_found'],
}, async ({ id }, { principal }, { notes }) => {
  const row = await notes.requireNote(principal, id)
  return new Answer(toNote(row), { headers: { etag: transcriptETag(row.transcript_version ?? 0) } })
})

const updateNote = defineOperation({
  id: 'updateNote', method: 'PATCH', path: '/v1/notes/:id', tag: 'Notes',
  summary: 'Update a note',
  description: 'Changes the fields sent (at least one); `folderId: null` moves the note to the top level.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  body: UpdateNoteRequest,
  responses: { 200: Note },
  errors: ['not_found'],
}, ({ id, ...body }, { principal }, { notes }) => notes.update(principal, id, body))

const deleteNote = defineOperation({
  id: 'deleteNote', method: 'DELETE', path: '/v1/notes/:id', tag: 'Notes',
  summary: 'Delete a note and its media',
  description: 'Permanently deletes the note and its stored media.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  responses: { 204: null },
  errors: ['not_found'],
}, ({ id }, caller, { notes }) => notes.delete(caller.principal, id, auditBy(caller)))

const getNoteStatus = defineOperation({
  id: 'getNoteStatus', method: 'GET', path: '/v1/notes/:id/status', tag: 'Notes',
  summary: 'Processing status of a note',
  description: 'Where processing stands: poll it after completing an upload until `isComplete` or `hasError` is true.',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: NoteStatus },
  errors: ['not_found'],
}, ({ id }, { principal }, { notes }) => notes.status(principal, id))

const getNoteTranscript = defineOperation({
  id: 'getNoteTranscript', method: 'GET', path: '/v1/notes/:id/transcript', tag: 'Notes',
  summary: 'Transcript of a note',
  description: 'The transcript without the summary; 409 while the note is still processing. `format` chooses the form: `json` (default, the Transcript), `verbose_json` (TranscriptVerbose: timed segments, and words when the engine gives them), `diarized_json` (OpenAI\'s diarized_json, as POST /v1/audio/transcriptions answers it: each segment with the name of its speaker as the note shows it, "Speaker A" for a recording that was not diarized), `srt` (application/x-subrip), `vtt` (text/vtt) or `txt` (text/plain), each with a `Content-Disposition` file name from the note\'s title. A note created from text has no times: `srt`, `vtt` and `diarized_json` answer 409 for it.',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  query: TranscriptQuery,
  responses: { 200: t.Union([Transcript, TranscriptVerbose, OpenAiDiarizedTranscription], { title: 'TranscriptResponse', description: 'The Transcript, with format=verbose_json the TranscriptVerbose, with format=diarized_json OpenAI\'s diarized transcription' }) },
  textResponses: ['application/x-subrip', 'text/vtt', 'text/plain'],
  errors: ['not_found', 'conflict'],
}, async ({ id, format }, caller, { notes }) => {
  const r = await notes.exportTranscript(caller.principal, id, format, auditBy(caller))
  const etag = transcriptETag(r.version)
  if (!r.file) return new Answer(r.transcript, { headers: { etag } })
  const { body, contentType, extension } = r.file
  return new Answer(body as Static<typeof TranscriptVerbose> | Static<typeof OpenAiDiarizedTranscription> | string, { contentType, headers: { 'content-disposition': attachment(r.title, extension, id), etag }, textFields: { noteId: id, format } })
})

// answered by the processing service (it runs the model and charges), asked of a note
const askNoteQuestion = defineOperation({
  id: 'askNoteQuestion', method: 'POST', path: '/v1/notes/:id/questions', tag: 'Notes',
  summary: 'Ask a question about a note',
  description: 'Answers a question from the note\'s transcript; 409 while the note is still processing. Charges 1 credit (nothing with a sandbox key).',
  role: 'viewer', scopes: ['notes:read', 'summaries:write'], credits: 1,
  params: IdParams,
  body: QuestionRequest,
  responses: { 200: AnswerSchema },
  errors: ['insufficient_credits', 'upstream_failure', 'not_found', 'conflict'],
}, async ({ id, question }, { principal }, { processing }) => charged(await processing.askNoteQuestion(principal, id, question)))

const listNoteSpeakers = defineOperation({
  id: 'listNoteSpeakers', method: 'GET', path: '/v1/notes/:id/speakers', tag: 'Speakers',
  summary: 'The speakers of a note',
  description: 'Who speaks in the recording (diarized by NOTESVC_DIARIZATION), in order of first speech: the label the transcript segments carry, the name given, and how much they say. Empty for a note that was not diarized; 409 while the note is still processing.',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: NoteSpeakerList },
  errors: ['not_found', 'conflict'],
}, async ({ id }, { principal }, { speakers }) => ({ data: await speakers.list(principal, id) }))

const updateNoteSpeaker = defineOperation({
  id: 'updateNoteSpeaker', method: 'PATCH', path: '/v1/notes/:id/speakers/:speakerId', tag: 'Speakers',
  summary: 'Name a speaker, or merge them into another',
  description: '`name` names the speaker everywhere the note shows them: transcript formats, subtitles, the summary (attendees, owners) and search by speaker; `null` unnames. With a voice print (engines that give one) the voice is remembered under the name unless `remember` is false, and offered as the `suggestion` of a matching speaker in later recordings of this library (never applied unasked). A name given answers a suggestion the speaker had. An account remembers at most 500 voices, live and sandbox together (unless the server\'s operator set another number, NOTESVC_MAX_SPEAKER_PROFILES_PER_ACCOUNT): past that, a new name is still given but not remembered, and the answer says so in `notice` (`profileId` null); a name already remembered is always updated. `mergeInto` gives every segment of this speaker to another and removes this one.',
  scopes: ['notes:write'], credits: 0,
  params: SpeakerParams,
  body: UpdateNoteSpeakerRequest,
  responses: { 200: NoteSpeaker },
  errors: ['not_found', 'conflict', 'precondition_failed'],
}, ({ id, speakerId, ...body }, caller, { speakers }) => speakers.update(caller.principal, id, speakerId, body, editBy(caller, 'updateNoteSpeaker')))

const answerSpeakerSuggestion = defineOperation({
  id: 'answerSpeakerSuggestion', method: 'POST', path: '/v1/notes/:id/speakers/:speakerId/suggestion', tag: 'Speakers',
  summary: 'Confirm or dismiss the voice suggested for a speaker',
  description: 'A remembered voice that matches a speaker of a new recording is offered as the speaker\'s `suggestion`, never applied. `{"accept": true}` gives the speaker its name, as a rename that remembers the voice does (everywhere the note shows them; the voice\'s print becomes this recording\'s); `{"accept": false}` dismisses it: it is not offered again for this note. Either clears the suggestion and is an edit of the transcript: a revision, `If-Match` honoured (412 with the current version), the new version in `ETag`. 404 when the speaker has no suggestion; 409 while the note is processing.',
  scopes: ['notes:write'], credits: 0,
  params: SpeakerParams,
  body: SpeakerSuggestionAnswer,
  responses: { 200: NoteSpeaker },
  errors: ['invalid_request', 'not_found', 'conflict', 'precondition_failed'],
}, async ({ id, speakerId, accept }, caller, { speakers }) => {
  const { version, ...speaker } = await speakers.answerSuggestion(caller.principal, id, speakerId, accept, editBy(caller, 'answerSpeakerSuggestion'))
  return new Answer(speaker, { headers: { etag: transcriptETag(version) } })
})

const updateNoteSegment = defineOperation({
  id: 'updateNoteSegment', method: 'PATCH', path: '/v1/notes/:id/segments/:index', tag: 'Speakers',
  summary: 'Correct one segment: its words, who said it',
  description: '`speaker` gives transcript segment `index` (its `id` in verbose_json) to another speaker of the note. `text` replaces its words: they are timed again by forced alignment to the segment\'s audio (the note\'s recording), or, when no engine can align them (no recording kept, no PocketSphinx), spread over the segment in proportion to their letters, and the segment says which in `timing`; the words get confidence 1. The note\'s text, search, subtitles and what its speaker said follow at once, and the summary is marked stale. Both may be sent, applied together.',
  scopes: ['notes:write'], credits: 0,
  params: SegmentParams,
  body: UpdateSegmentRequest,
  responses: { 200: UpdateSegmentResponse },
  errors: ['invalid_request', 'not_found', 'conflict', 'precondition_failed'],
}, async ({ id, index, speaker, text }, caller, { speakers, segmentText }) => {
  const who = editBy(caller, 'updateNoteSegment')
  if (text === undefined) return { data: await speakers.reassign(caller.principal, id, Number(index), speaker!, who) }
  const { version, speakers: data, ...segment } = await segmentText.edit(caller.principal, id, who, Number(index), text, speaker)
  return new Answer({ data, segment }, { headers: { etag: transcriptETag(version) } })
})

const listSpeakerProfiles = defineOperation({
  id: 'listSpeakerProfiles', method: 'GET', path: '/v1/speakers', tag: 'Speakers',
  summary: 'Remembered voices',
  description: 'The voices named in notes of this library, offered as suggestions for the speakers of its later recordings whose voices match, by name (ties by id), a page at a time: `limit` (1 to 100, default 50) from `offset`; `pagination.hasMore` says whether another page exists.',
  scopes: ['notes:read'], credits: 0,
  query: ListSpeakerProfilesQuery,
  responses: { 200: SpeakerProfileList },
}, (q, { principal }, { speakers }) => speakers.profiles(principal, q))

const getSpeakerProfile = defineOperation({
  id: 'getSpeakerProfile', method: 'GET', path: '/v1/speakers/:id', tag: 'Speakers',
  summary: 'A remembered voice',
  description: 'One voice this library remembers: its name, the diarization engine whose voice print it is, and when it was first named and last updated. 404 for a voice of another library (another account\'s, or the sandbox\'s for a live key).',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: SpeakerProfile },
  errors: ['not_found'],
}, ({ id }, { principal }, { speakers }) => speakers.profile(principal, id))

const deleteSpeakerProfile = defineOperation({
  id: 'deleteSpeakerProfile', method: 'DELETE', path: '/v1/speakers/:id', tag: 'Speakers',
  summary: 'Forget a voice',
  description: 'Deletes the stored voice print; notes it named keep the name, later recordings are no longer matched with it.',
  scopes: ['notes:write'], credits: 0,
  params: IdParams,
  responses: { 204: null },
  errors: ['not_found'],
}, ({ id }, { principal }, { speakers }) => speakers.deleteProfile(principal, id))

export const notesOperations = [listNotes, createNote, getNote, updateNote, deleteNote, getNoteStatus, getNoteTranscript, askNoteQuestion, listNoteSpeakers, updateNoteSpeaker, answerSpeakerSuggestion, updateNoteSegment, listSpeakerProfiles, getSpeakerProfile, deleteSpeakerProfile, moveNote] as const
