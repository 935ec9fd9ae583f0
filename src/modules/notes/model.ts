import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'

const NOTE_STATUSES = ['Done', 'Summarizing', 'Error'] as const
const PROCESSING_STAGES = ['awaiting_upload', 'recording', 'queued', 'converting', 'transcribing', 'summarizing'] as const
/** the stage a note in `Summarizing` is at, as its status answer shows it */
export type ProcessingStage = (typeof PROCESSING_STAGES)[number]
const ERROR_CODES = ['media_missing', 'media_unreadable', 'media_unsupported', 'transcription_failed', 'summarization_failed', 'engine_unavailable', 'timeout', 'internal'] as const

const Status = t.Union([t.Literal('Done'), t.Literal('Summarizing'), t.Literal('Error')], { error: `must be one of ${NOTE_STATUSES.join(', ')}` })

/** The fields of a note in a list, and of a whole note. */
const noteFields = {
  id: t.String({ examples: ['note_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
  title: t.String(),
  summary: t.String({ description: 'generated summary in the note\'s style' }),
  status: Status,
  processingStage: Nullable(t.String({ examples: ['transcribing'] })),
  type: t.String({ examples: ['audio', 'video', 'youtube', 'import'] }),
  styleId: t.String(),
  language: Nullable(t.String()),
  folderId: Nullable(t.String()),
  isPinned: t.Boolean(),
  source: t.String(),
  dateCreated: DateTime,
  updatedAt: DateTime,
  tags: t.Array(t.Object({ id: t.String(), name: t.String(), color: t.String() }, { title: 'NoteTag' }), { description: 'beyond the interface: the note\'s tags, by name (GET /v1/tags; change them with PUT /v1/notes/{id}/tags)' }),
}

export const Note = t.Object(
  {
    ...noteFields,
    originalTranscription: t.Optional(t.String({ description: 'full transcript; omitted from list items, present on getNote' })),
    structuredContent: t.Optional(t.Record(t.String(), t.Unknown(), { description: 'machine-readable form of the summary, keyed by format; `{}` until processing has produced it; omitted from list items' })),
    summaryStale: t.Optional(t.Boolean({ description: 'beyond the interface: true when the transcript changed after this summary was made (a segment given to another speaker), until the summary is made again (POST /v1/notes/{id}/summaries); omitted from list items' })),
    mediaRemovedAt: t.Optional(t.String({ format: 'date-time', description: 'beyond the interface: present only on a note whose recording the account\'s retention policy deleted, and when (its transcript, summary and structured content are kept; its media answers 404); omitted from list items' })),
  },
  { title: 'Note', description: 'A note: title, summary, transcript and structured content, and where processing stands.' },
)
export type Note = Static<typeof Note>

const NoteListItem = t.Object(
  {
    ...noteFields,
    snippet: t.Optional(t.String({ description: 'present when searching (`q`): a short passage of the title, summary or transcript around the match, plain text, each matched word between `«` and `»` (a `«` or `»` of the note itself shows as `‹` or `›`, so the markers are unambiguous); `…` where the passage was cut' })),
  },
  { title: 'NoteListItem', description: 'A note as lists show it: without its transcript and structured content.' },
)

/** The page a list holds (SPEC's NoteList): the notes' list and the remembered voices' list. */
const Pagination = t.Object(
  { limit: Integer(), offset: Integer(), hasMore: t.Boolean({ description: 'true when another page exists' }) },
  { title: 'Pagination', description: 'The page a list holds.' },
)

export const NoteList = t.Object(
  {
    data: t.Array(NoteListItem),
    pagination: Pagination,
  },
  { title: 'NoteList', description: 'A page of notes, newest first.' },
)
export type NoteList = Static<typeof NoteList>

export const NoteStatus = t.Object(
  {
    status: t.Union([t.Literal('Done'), t.Literal('Summarizing'), t.Literal('Error'), t.Literal('Unknown')]),
    processingStage: Nullable(t.String()),
    progress: Nullable(t.Number({ minimum: 0, maximum: 1, description: 'how far processing has got, from 0 to 1: the share of the recording transcribed while `transcribing`, 1 once the transcript is complete (`summarizing`, `Done`, and a note created from text); null when unknown (before transcription starts, or when the recording\'s length cannot be read). On `Error` it keeps the last value.' })),
    isComplete: t.Boolean({ description: 'true when transcript and summary are ready' }),
    hasError: t.Boolean({ description: 'true when processing failed' }),
    errorMessage: Nullable(t.String()),
    errorCode: Nullable(t.String({ description: `one of ${ERROR_CODES.join(', ')}` })),
  },
  { title: 'NoteStatus', description: 'Where processing of a note stands.' },
)

/** A remembered voice offered for a speaker of a new recording: never applied until a person confirms it. */
const SpeakerSuggestion = Nullable(t.Object(
  {
    profileId: t.String({ description: 'the remembered voice (GET /v1/speakers/{id})' }),
    name: t.String({ description: 'its name: what the speaker is called once the suggestion is confirmed' }),
    similarity: t.Number({ minimum: 0, maximum: 1, description: 'how alike the voice prints are (cosine similarity; the engine\'s threshold, 0.93 for the builtin one, or above)' }),
  },
  { title: 'SpeakerSuggestion', description: 'a remembered voice that matches this speaker, offered and not applied (`name` stays null): confirm or dismiss it with POST /v1/notes/{id}/speakers/{speakerId}/suggestion; null when none' },
))

/** A note's speaker as transcripts name them. */
const SpeakerRef = t.Object(
  {
    id: t.String({ description: 'the label the transcript segments carry: A, B, … in order of first speech' }),
    name: t.String({ description: 'the name given, or "Speaker A" while unnamed' }),
    suggestion: SpeakerSuggestion,
  },
  { title: 'SpeakerRef' },
)

export const Transcript = t.Object(
  {
    noteId: t.String(),
    transcript: t.String(),
    language: Nullable(t.String()),
    speakers: t.Optional(t.Array(SpeakerRef, { description: 'who speaks in the recording, when it was diarized (NOTESVC_DIARIZATION)' })),
  },
  { title: 'Transcript', description: 'The transcript of a note, without its summary.' },
)

export const Answer = t.Object(
  {
    noteId: t.String(),
    question: t.String(),
    answer: t.String(),
    creditsCharged: Integer(),
    notice: t.Optional(t.String({ description: 'present on sandbox answers: the answer is fixed and nothing was charged' })),
  },
  { title: 'Answer', description: 'An answer to a question about a note, drawn from its transcript.' },
)

/** A folder id, or null for the top level; an empty string is neither. */
const FolderRef = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()], { error: 'must be the id of one of your folders, or null for the top level' })

/**
 * The largest offset: the largest whole number JSON and JavaScript carry exactly (2^53 - 1), well
 * within what SQLite and PostgreSQL hold in a 64-bit integer. Larger values are refused, not rounded.
 */
const MAX_OFFSET = Number.MAX_SAFE_INTEGER

/** The longest search text `q` accepted, in characters. */
const MAX_QUERY_CHARS = 500

/** `limit` and `offset` of a paged list, as listNotes takes them (SPEC: 1 to 100, default 50; from 0). */
const pageQuery = {
  limit: t.Optional(Integer({ minimum: 1, maximum: 100, default: 50, error: 'must be a whole number from 1 to 100' })),
  offset: t.Optional(Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, error: `must be a whole number from 0 to ${MAX_OFFSET}` })),
}

export const ListNotesQuery = t.Object({
  speaker: t.Optional(t.String({ minLength: 1, maxLength: 100, description: 'with `q`: only notes where the speaker of this name (or "Speaker A" while unnamed) said every word of `q`', error: 'must be a speaker\'s name of 1 to 100 characters, sent with q' })),
  q: t.Optional(t.String({ minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'search text: only notes whose title, summary or transcript contain every word (the last one also as the start of a word), most relevant first, each with a `snippet`; any text is accepted and read as plain words (quotes and operators are not syntax), but U+0000 and lone surrogates, refused in every field', error: `must be search text of 1 to ${MAX_QUERY_CHARS} characters; omit q to list every note` })),
  updatedAfter: t.Optional(t.String({ format: 'date-time', error: 'must be an ISO 8601 date-time such as 2026-11-22T10:00:00Z' })),
  folderId: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'only notes filed under this folder; `null` lists the top level' })),
  status: t.Optional(Status),
  type: t.Optional(t.String({ minLength: 1, maxLength: 50 })),
  tag: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 50, description: 'beyond the interface: only notes carrying the tag of this name (without regard to case); repeated (`tag=a&tag=b`), only notes carrying every one', error: 'must be tag names (at most 50 tag= parameters)' })),
  ...pageQuery,
})
export type ListNotesQuery = Static<typeof ListNotesQuery>

const Title = t.String({ maxLength: 500, error: 'must be a string of at most 500 characters' })
/**
 * A note's content or summary: at most 2,000,000 characters, the transcript of about 37 hours of
 * speech (900 characters a minute); the JSON routes' body limit (http/body-limit.ts) is set to hold it.
 */
export const MAX_NOTE_TEXT_CHARS = 2_000_000
const NoteText = (description: string) => t.String({ maxLength: MAX_NOTE_TEXT_CHARS, description: `${description}; at most 2,000,000 characters`, error: 'must be a string of at most 2000000 characters' })

export const CreateNoteRequest = t.Object(
  {
    title: Title,
    content: NoteText('text or markdown body'),
    folderId: t.Optional(FolderRef),
    source: t.Optional(t.String({ maxLength: 200, description: 'origin label for the caller\'s records', error: 'must be a string of at most 200 characters' })),
    format: t.Optional(t.String({ minLength: 1, maxLength: 50, description: 'structured-content format label', error: 'must be a string of 1 to 50 characters' })),
  },
  { additionalProperties: false, title: 'CreateNoteRequest' },
)
export type CreateNoteRequest = Static<typeof CreateNoteRequest>

export const UpdateNoteRequest = t.Object(
  {
    title: t.Optional(Title),
    summary: t.Optional(NoteText('the note\'s summary')),
    folderId: t.Optional(FolderRef),
    isPinned: t.Optional(t.Boolean({ error: 'must be true or false' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateNoteRequest', error: 'send at least one of title, summary, folderId, isPinned, and no other fields' },
)
export type UpdateNoteRequest = Static<typeof UpdateNoteRequest>

export const QuestionRequest = t.Object(
  { question: t.String({ minLength: 1, maxLength: 2000, error: 'must be a string of 1 to 2000 characters' }) },
  { additionalProperties: false, title: 'QuestionRequest' },
)


/** `getNoteTranscript?format=`: the interface's Transcript (`json`, the default) or an export. */
const NOTE_TRANSCRIPT_FORMATS = ['json', 'verbose_json', 'diarized_json', 'srt', 'vtt', 'txt'] as const
export type NoteTranscriptFormat = (typeof NOTE_TRANSCRIPT_FORMATS)[number]

export const TranscriptQuery = t.Object({
  format: t.Optional(t.Union(NOTE_TRANSCRIPT_FORMATS.map(f => t.Literal(f)), {
    default: 'json',
    description: '`json` (the Transcript), `verbose_json` (with timed segments and words), `diarized_json` (OpenAI\'s shape: timed segments with the speaker\'s name), `srt`, `vtt` or `txt`',
    error: `must be one of ${NOTE_TRANSCRIPT_FORMATS.join(', ')}`,
  })),
})

const Seconds = Nullable(t.Number({ minimum: 0, description: 'seconds from the start of the recording; null for a note created from text' }))

export const TranscriptVerbose = t.Object(
  {
    noteId: t.String(),
    transcript: t.String(),
    language: Nullable(t.String()),
    timed: t.Boolean({ description: 'false for a note created from text (or transcribed before times were kept): one segment per paragraph, times null' }),
    duration: Nullable(t.Number({ description: 'the end of the last segment, in seconds; null when untimed' })),
    segments: t.Array(t.Object({
      id: Integer(), start: Seconds, end: Seconds, text: t.String(),
      speaker: t.Optional(t.String({ description: 'who said it (the name given, or "Speaker A"), when the recording was diarized' })),
      speakerId: t.Optional(t.String({ description: 'the speaker\'s label (A, B, …), as GET /v1/notes/{id}/speakers lists them' })),
      timing: t.Optional(t.Union([t.Literal('aligned'), t.Literal('proportional')], { description: 'present when a person corrected the segment\'s words: how they were timed (aligned to the audio, or in proportion)' })),
    }, { title: 'TranscriptSegment' })),
    speakers: t.Optional(t.Array(SpeakerRef)),
    words: t.Optional(t.Array(t.Object({ word: t.String(), start: t.Number(), end: t.Number(), confidence: t.Optional(t.Number({ description: 'how sure the speech engine was of the word, 0 to 1 (PocketSphinx\'s posterior; 1: a person wrote it); absent when the engine gives none' })) }, { title: 'TranscriptWord' }), { description: 'every word with its times, when the speech engine gives them (PocketSphinx does, whisper.cpp does not)' })),
  },
  { title: 'TranscriptVerbose', description: 'The transcript with its timed segments (`format=verbose_json`).' },
)
export type TranscriptVerbose = Static<typeof TranscriptVerbose>

const SpeakerName = t.String({ minLength: 1, maxLength: 100, error: 'must be a name of 1 to 100 characters' })

export const NoteSpeaker = t.Object(
  {
    id: t.String({ description: 'the label the transcript segments carry (A, B, …)' }),
    name: Nullable(t.String({ description: 'the name given; null while unnamed' })),
    displayName: t.String({ description: 'the name, or "Speaker A" while unnamed: what transcripts and subtitles show' }),
    segments: Integer({ description: 'how many transcript segments are theirs' }),
    seconds: t.Number({ description: 'how long they speak, in seconds' }),
    profileId: Nullable(t.String({ description: 'the stored voice (GET /v1/speakers) that named them, if any' })),
    suggestion: SpeakerSuggestion,
    notice: t.Optional(t.String({ description: 'present when a name was given but its voice not remembered because the account already remembers the most voices it may (500 unless the server\'s operator set another number): `profileId` is then null; forget voices no longer needed with DELETE /v1/speakers/{id}, then name the speaker again to remember it' })),
  },
  { title: 'NoteSpeaker' },
)
export type NoteSpeaker = Static<typeof NoteSpeaker>
export const NoteSpeakerList = t.Object({ data: t.Array(NoteSpeaker) }, { title: 'NoteSpeakerList' })

export const UpdateNoteSpeakerRequest = t.Object(
  {
    name: t.Optional(Nullable(SpeakerName)),
    mergeInto: t.Optional(t.String({ minLength: 1, maxLength: 8, description: 'another speaker of the note (its id): every segment of this one becomes theirs and this one is removed' })),
    remember: t.Optional(t.Boolean({ description: 'with `name`: store the voice under that name and recognise it in later recordings of this library (default true; needs an engine that gives voice prints)' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateNoteSpeakerRequest', error: 'send name or mergeInto (and optionally remember), and no other fields' },
)
export type UpdateNoteSpeakerRequest = Static<typeof UpdateNoteSpeakerRequest>

export const SpeakerSuggestionAnswer = t.Object(
  {
    accept: t.Boolean({ description: 'true: the suggested name is given to the speaker (as a rename that remembers the voice); false: the suggestion is dismissed for this note' }),
  },
  { additionalProperties: false, title: 'SpeakerSuggestionAnswer', error: 'send {"accept": true} to confirm the suggested name or {"accept": false} to dismiss it, and no other fields' },
)

export const SpeakerParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }),
  speakerId: t.String({ minLength: 1, maxLength: 8, description: 'the speaker\'s label (A, B, …)' }),
})
export const SegmentParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }),
  index: t.String({ pattern: '^[0-9]{1,6}$', description: 'the segment\'s position in verbose_json (its `id`), from 0', error: 'must be a segment number from 0' }),
})
export const UpdateSegmentRequest = t.Object(
  {
    speaker: t.Optional(t.String({ minLength: 1, maxLength: 8, description: 'the id of the speaker (of this note) who said it' })),
    text: t.Optional(t.String({ minLength: 1, maxLength: MAX_NOTE_TEXT_CHARS, description: 'what the segment says instead: its words are timed again by forced alignment to the segment\'s audio (proportionally when no engine can align them, and the segment says so in `timing`)', error: 'must be the segment\'s words, 1 to 2000000 characters' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateSegmentRequest', error: 'send speaker, text or both, and no other fields' },
)

const Timing = t.Union([t.Literal('aligned'), t.Literal('proportional')], { description: 'how a corrected segment\'s words were timed: aligned to its audio by a speech engine, or spread over the segment in proportion to their letters (no recording, or no engine could align them)' })

export const UpdateSegmentResponse = t.Object({
  data: t.Array(NoteSpeaker),
  segment: t.Optional(t.Object({
    id: Integer(), start: t.Number(), end: t.Number(), text: t.String(), timing: Timing,
    timingNote: t.Optional(t.String({ description: 'why the words are timed in proportion' })),
    words: t.Array(t.Object({ word: t.String(), start: t.Number(), end: t.Number(), confidence: t.Number({ description: '1: a person wrote the word' }) })),
  }, { description: 'the corrected segment, when `text` was sent' })),
}, { title: 'UpdateSegmentResponse' })

export const SpeakerProfile = t.Object(
  {
    id: t.String(),
    name: t.String(),
    engine: t.String({ description: 'the diarization engine whose voice print it is; voices are matched only with prints of the same engine' }),
    createdAt: t.String({ format: 'date-time' }),
    updatedAt: t.String({ format: 'date-time' }),
  },
  { title: 'SpeakerProfile', description: 'A voice named in a note, recognised in later recordings of the library.' },
)
export type SpeakerProfile = Static<typeof SpeakerProfile>
export const SpeakerProfileList = t.Object(
  { data: t.Array(SpeakerProfile), pagination: Pagination },
  { title: 'SpeakerProfileList', description: 'A page of the library\'s remembered voices, by name.' },
)
export type SpeakerProfileList = Static<typeof SpeakerProfileList>

export const ListSpeakerProfilesQuery = t.Object(pageQuery)
export type ListSpeakerProfilesQuery = Static<typeof ListSpeakerProfilesQuery>
