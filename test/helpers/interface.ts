/**
 * The interface, written down as data for the tests: copied by hand from SPEC.md (Endpoints,
 * Authentication, Errors, Limits) and DECISIONS.md. Tests take their expected values from here, never
 * from the module under test, so a wrong entry in src/ (a scope, a cost, a status) fails a test instead
 * of moving the expectation with it. Nothing in this file may import from src/.
 */

export type SpecScope =
  | 'notes:read' | 'notes:write' | 'folders:read' | 'folders:write'
  | 'transcriptions:write' | 'summaries:write' | 'usage:read'

/** SPEC.md "Authentication" 5: the scopes, in the order of the table, with what each grants. */
export const SPEC_SCOPES: { scope: SpecScope; description: string }[] = [
  { scope: 'notes:read', description: 'read notes, transcripts and summaries' },
  { scope: 'notes:write', description: 'create, update, delete notes' },
  { scope: 'folders:read', description: 'read folders' },
  { scope: 'folders:write', description: 'create, update, delete folders' },
  { scope: 'transcriptions:write', description: 'transcribe audio and video' },
  { scope: 'summaries:write', description: 'generate summaries from audio, text and video URLs' },
  { scope: 'usage:read', description: 'read credit balance and usage history' },
]

export const EVERY_SCOPE: SpecScope[] = SPEC_SCOPES.map(s => s.scope)

export interface SpecOperation {
  id: string
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** the path as SPEC.md writes it, with `{id}` */
  path: string
  /** empty for the two operations that need no credential */
  scopes: SpecScope[]
  /** the `Cost` column: an integer or the text `1 per started minute` */
  cost: number | '1 per started minute'
  /** the `Extra errors` column: statuses beyond the common 400, 401, 403, 429, 500 */
  errors: number[]
}

/** SPEC.md "Endpoints": every operation with its method, path, scopes and cost, as the tables give them. */
export const SPEC_OPERATIONS: SpecOperation[] = [
  { id: 'getApiIndex', method: 'GET', path: '/v1', scopes: [], cost: 0, errors: [] },
  { id: 'getHealth', method: 'GET', path: '/v1/health', scopes: [], cost: 0, errors: [] },

  { id: 'listNotes', method: 'GET', path: '/v1/notes', scopes: ['notes:read'], cost: 0, errors: [] },
  { id: 'createNote', method: 'POST', path: '/v1/notes', scopes: ['notes:write'], cost: 0, errors: [] },
  { id: 'getNote', method: 'GET', path: '/v1/notes/{id}', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'updateNote', method: 'PATCH', path: '/v1/notes/{id}', scopes: ['notes:write'], cost: 0, errors: [404] },
  { id: 'deleteNote', method: 'DELETE', path: '/v1/notes/{id}', scopes: ['notes:write'], cost: 0, errors: [404] },
  { id: 'getNoteStatus', method: 'GET', path: '/v1/notes/{id}/status', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'getNoteTranscript', method: 'GET', path: '/v1/notes/{id}/transcript', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  { id: 'askNoteQuestion', method: 'POST', path: '/v1/notes/{id}/questions', scopes: ['notes:read', 'summaries:write'], cost: 1, errors: [402, 404, 409, 502] },

  { id: 'listFolders', method: 'GET', path: '/v1/folders', scopes: ['folders:read'], cost: 0, errors: [] },
  { id: 'createFolder', method: 'POST', path: '/v1/folders', scopes: ['folders:write'], cost: 0, errors: [] },
  { id: 'getFolder', method: 'GET', path: '/v1/folders/{id}', scopes: ['folders:read'], cost: 0, errors: [404] },
  { id: 'updateFolder', method: 'PATCH', path: '/v1/folders/{id}', scopes: ['folders:write'], cost: 0, errors: [404] },
  { id: 'deleteFolder', method: 'DELETE', path: '/v1/folders/{id}', scopes: ['folders:write'], cost: 0, errors: [404] },

  { id: 'createUpload', method: 'POST', path: '/v1/uploads', scopes: ['transcriptions:write', 'notes:write'], cost: 0, errors: [413, 415] },
  { id: 'completeUpload', method: 'POST', path: '/v1/uploads/{id}/complete', scopes: ['transcriptions:write', 'notes:write'], cost: '1 per started minute', errors: [402, 404, 409, 502] },
  { id: 'createTranscription', method: 'POST', path: '/v1/transcriptions', scopes: ['transcriptions:write'], cost: '1 per started minute', errors: [402, 502] },
  { id: 'createSummary', method: 'POST', path: '/v1/summaries', scopes: ['summaries:write'], cost: 2, errors: [402, 422, 502] },
  { id: 'createYoutubeSummary', method: 'POST', path: '/v1/youtube-summaries', scopes: ['summaries:write'], cost: '1 per started minute', errors: [402, 502] },

  { id: 'getUsage', method: 'GET', path: '/v1/usage', scopes: ['usage:read'], cost: 0, errors: [] },
]

/** DECISIONS.md "Beyond the interface": operations added beside SPEC.md's, with the names fixed there. */
const BEYOND_SPEC_OPERATIONS: SpecOperation[] = [
  { id: 'createAudioTranscription', method: 'POST', path: '/v1/audio/transcriptions', scopes: ['transcriptions:write'], cost: '1 per started minute', errors: [402, 413, 502] },
  { id: 'createAudioTranslation', method: 'POST', path: '/v1/audio/translations', scopes: ['transcriptions:write'], cost: '1 per started minute', errors: [402, 413, 502] },
  { id: 'listModels', method: 'GET', path: '/v1/models', scopes: ['transcriptions:write'], cost: 0, errors: [] },
  // speakers (docs/decisions.md "Speakers")
  { id: 'listNoteSpeakers', method: 'GET', path: '/v1/notes/{id}/speakers', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  { id: 'updateNoteSpeaker', method: 'PATCH', path: '/v1/notes/{id}/speakers/{speakerId}', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'answerSpeakerSuggestion', method: 'POST', path: '/v1/notes/{id}/speakers/{speakerId}/suggestion', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'updateNoteSegment', method: 'PATCH', path: '/v1/notes/{id}/segments/{index}', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'splitNoteSegment', method: 'POST', path: '/v1/notes/{id}/segments/{index}/split', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'mergeNoteSegments', method: 'POST', path: '/v1/notes/{id}/segments/{index}/merge', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'reassignNoteWords', method: 'POST', path: '/v1/notes/{id}/segments/{index}/reassign', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'previewNoteReplacement', method: 'POST', path: '/v1/notes/{id}/replacements/preview', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  { id: 'replaceInNote', method: 'POST', path: '/v1/notes/{id}/replacements', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  // a transcript's history (docs/decisions.md "Transcript revisions")
  { id: 'listNoteRevisions', method: 'GET', path: '/v1/notes/{id}/revisions', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  { id: 'getNoteRevision', method: 'GET', path: '/v1/notes/{id}/revisions/{version}', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  { id: 'restoreNoteRevision', method: 'POST', path: '/v1/notes/{id}/revisions/{version}/restore', scopes: ['notes:write'], cost: 0, errors: [404, 409, 412] },
  { id: 'listSpeakerProfiles', method: 'GET', path: '/v1/speakers', scopes: ['notes:read'], cost: 0, errors: [] },
  { id: 'getSpeakerProfile', method: 'GET', path: '/v1/speakers/{id}', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'deleteSpeakerProfile', method: 'DELETE', path: '/v1/speakers/{id}', scopes: ['notes:write'], cost: 0, errors: [404] },
  // summarize again, priced as createSummary (DECISIONS.md "summarize again"); a note's export (issue 31)
  { id: 'createNoteSummary', method: 'POST', path: '/v1/notes/{id}/summaries', scopes: ['notes:read', 'summaries:write'], cost: 2, errors: [402, 404, 409] },
  { id: 'exportNote', method: 'GET', path: '/v1/notes/{id}/export', scopes: ['notes:read'], cost: 0, errors: [404, 409] },
  // share links (issue 33, docs/decisions.md "Share links"); 403 sharing_disabled when NOTESVC_SHARING=off
  { id: 'createNoteShare', method: 'POST', path: '/v1/notes/{id}/shares', scopes: ['notes:write'], cost: 0, errors: [404] },
  { id: 'listNoteShares', method: 'GET', path: '/v1/notes/{id}/shares', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'revokeNoteShare', method: 'DELETE', path: '/v1/notes/{id}/shares/{shareId}', scopes: ['notes:write'], cost: 0, errors: [404] },
  // tags (issue 33; docs/decisions.md "Tags")
  { id: 'listTags', method: 'GET', path: '/v1/tags', scopes: ['notes:read'], cost: 0, errors: [] },
  { id: 'createTag', method: 'POST', path: '/v1/tags', scopes: ['notes:write'], cost: 0, errors: [409] },
  { id: 'updateTag', method: 'PATCH', path: '/v1/tags/{id}', scopes: ['notes:write'], cost: 0, errors: [404, 409] },
  { id: 'deleteTag', method: 'DELETE', path: '/v1/tags/{id}', scopes: ['notes:write'], cost: 0, errors: [404] },
  { id: 'getNoteTags', method: 'GET', path: '/v1/notes/{id}/tags', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'addNoteTag', method: 'POST', path: '/v1/notes/{id}/tags', scopes: ['notes:write'], cost: 0, errors: [404] },
  { id: 'removeNoteTag', method: 'DELETE', path: '/v1/notes/{id}/tags/{tagId}', scopes: ['notes:write'], cost: 0, errors: [404] },
  // a question across the library, priced like a question (DECISIONS.md "tags and asking", issue 33)
  { id: 'askLibrary', method: 'POST', path: '/v1/questions', scopes: ['notes:read', 'summaries:write'], cost: 1, errors: [402, 502] },
  // workspaces (issue 35; docs/decisions.md "Workspaces"): the role is the gate, reads need notes:read and changes
  // notes:write. Membership, invitations and keys are not MCP tools (like webhooks and retention): people set them
  { id: 'listWorkspaces', method: 'GET', path: '/v1/workspaces', scopes: ['notes:read'], cost: 0, errors: [] },
  { id: 'createWorkspace', method: 'POST', path: '/v1/workspaces', scopes: ['notes:write'], cost: 0, errors: [] },
  { id: 'getWorkspace', method: 'GET', path: '/v1/workspaces/{id}', scopes: ['notes:read'], cost: 0, errors: [404] },
  { id: 'renameWorkspace', method: 'PATCH', path: '/v1/workspaces/{id}', scopes: ['notes:write'], cost: 0, errors: [404, 409] },
  // a note moved to another workspace of the same person (issue 35, docs/decisions.md "Moving a note to another workspace")
  { id: 'moveNote', method: 'POST', path: '/v1/notes/{id}/move', scopes: ['notes:write'], cost: 0, errors: [404, 409] },
]

/** Every operation the server offers: SPEC.md's and those beside it. */
export const ALL_OPERATIONS: SpecOperation[] = [...SPEC_OPERATIONS, ...BEYOND_SPEC_OPERATIONS]

/** SPEC.md "Errors": every code with its HTTP status. */
export const SPEC_ERROR_STATUS: Record<string, number> = {
  invalid_request: 400,
  invalid_token: 401,
  insufficient_credits: 402,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  content_policy: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_failure: 502,
}

/** DECISIONS.md "Credits": `usage.costs`, the cost table the service publishes. */
export const SPEC_COSTS = { transcriptionPerMinute: 1, youtubePerMinute: 1, summarizeText: 2, askQuestion: 1, documentFlat: 2 }
