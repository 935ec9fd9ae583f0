import type { RateClass } from '../config'

export const SCOPES = [
  { scope: 'notes:read', description: 'read notes, transcripts and summaries' },
  { scope: 'notes:write', description: 'create, update, delete notes' },
  { scope: 'folders:read', description: 'read folders' },
  { scope: 'folders:write', description: 'create, update, delete folders' },
  { scope: 'transcriptions:write', description: 'transcribe audio and video' },
  { scope: 'summaries:write', description: 'generate summaries from audio, text and video URLs' },
  { scope: 'usage:read', description: 'read credit balance and usage history' },
] as const

export type Scope = (typeof SCOPES)[number]['scope']
export const ALL_SCOPES: Scope[] = SCOPES.map(s => s.scope)

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as string[]).includes(value)
}

export type Credits = number | '1 per started minute'

export interface Operation {
  id: string
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** Elysia path pattern */
  path: string
  summary: string
  tag: string
  /** empty for the two public operations */
  scopes: Scope[]
  credits: Credits
  rateClass: RateClass
  public?: boolean
}

const op = (o: Omit<Operation, 'rateClass'> & { rateClass?: RateClass }): Operation => ({
  ...o,
  rateClass: o.rateClass ?? (o.credits !== 0 ? 'processing' : o.method === 'GET' ? 'read' : 'write'),
})

/**
 * Every operation of SPEC.md "Endpoints": the single table that drives authentication, scopes, rate
 * classes and the OpenAPI annotations. Rate classes follow DECISIONS.md: the five charging operations
 * are `processing`, other writes `write`, reads `read`.
 */
export const OPERATIONS: Operation[] = [
  op({ id: 'getApiIndex', method: 'GET', path: '/v1', summary: 'Describe the API', tag: 'Discovery', scopes: [], credits: 0, public: true }),
  op({ id: 'getHealth', method: 'GET', path: '/v1/health', summary: 'Liveness check', tag: 'Discovery', scopes: [], credits: 0, public: true }),

  op({ id: 'listNotes', method: 'GET', path: '/v1/notes', summary: 'List notes, newest first', tag: 'Notes', scopes: ['notes:read'], credits: 0 }),
  op({ id: 'createNote', method: 'POST', path: '/v1/notes', summary: 'Create a note from text', tag: 'Notes', scopes: ['notes:write'], credits: 0 }),
  op({ id: 'getNote', method: 'GET', path: '/v1/notes/:id', summary: 'Get a note', tag: 'Notes', scopes: ['notes:read'], credits: 0 }),
  op({ id: 'updateNote', method: 'PATCH', path: '/v1/notes/:id', summary: 'Update a note', tag: 'Notes', scopes: ['notes:write'], credits: 0 }),
  op({ id: 'deleteNote', method: 'DELETE', path: '/v1/notes/:id', summary: 'Delete a note and its media', tag: 'Notes', scopes: ['notes:write'], credits: 0 }),
  op({ id: 'getNoteStatus', method: 'GET', path: '/v1/notes/:id/status', summary: 'Processing status of a note', tag: 'Notes', scopes: ['notes:read'], credits: 0 }),
  op({ id: 'getNoteTranscript', method: 'GET', path: '/v1/notes/:id/transcript', summary: 'Transcript of a note', tag: 'Notes', scopes: ['notes:read'], credits: 0 }),
  op({ id: 'askNoteQuestion', method: 'POST', path: '/v1/notes/:id/questions', summary: 'Ask a question about a note', tag: 'Notes', scopes: ['notes:read', 'summaries:write'], credits: 1 }),

  op({ id: 'listFolders', method: 'GET', path: '/v1/folders', summary: 'List folders by name', tag: 'Folders', scopes: ['folders:read'], credits: 0 }),
  op({ id: 'createFolder', method: 'POST', path: '/v1/folders', summary: 'Create a folder', tag: 'Folders', scopes: ['folders:write'], credits: 0 }),
  op({ id: 'getFolder', method: 'GET', path: '/v1/folders/:id', summary: 'Get a folder', tag: 'Folders', scopes: ['folders:read'], credits: 0 }),
  op({ id: 'updateFolder', method: 'PATCH', path: '/v1/folders/:id', summary: 'Update a folder', tag: 'Folders', scopes: ['folders:write'], credits: 0 }),
  op({ id: 'deleteFolder', method: 'DELETE', path: '/v1/folders/:id', summary: 'Delete a folder, keeping its notes', tag: 'Folders', scopes: ['folders:write'], credits: 0 }),

  op({ id: 'createUpload', method: 'POST', path: '/v1/uploads', summary: 'Start an upload', tag: 'Processing', scopes: ['transcriptions:write', 'notes:write'], credits: 0 }),
  op({ id: 'completeUpload', method: 'POST', path: '/v1/uploads/:id/complete', summary: 'Complete an upload and start processing', tag: 'Processing', scopes: ['transcriptions:write', 'notes:write'], credits: '1 per started minute' }),
  op({ id: 'createTranscription', method: 'POST', path: '/v1/transcriptions', summary: 'Transcribe audio from a URL', tag: 'Processing', scopes: ['transcriptions:write'], credits: '1 per started minute' }),
  op({ id: 'createSummary', method: 'POST', path: '/v1/summaries', summary: 'Summarize text', tag: 'Processing', scopes: ['summaries:write'], credits: 2 }),
  op({ id: 'createYoutubeSummary', method: 'POST', path: '/v1/youtube-summaries', summary: 'Summarize a video link', tag: 'Processing', scopes: ['summaries:write'], credits: '1 per started minute' }),

  op({ id: 'getUsage', method: 'GET', path: '/v1/usage', summary: 'Credit balance and usage history', tag: 'Usage', scopes: ['usage:read'], credits: 0 }),
]

const byId = new Map(OPERATIONS.map(o => [o.id, o]))
const byRoute = new Map(OPERATIONS.map(o => [`${o.method} ${o.path}`, o]))

export function operation(id: string): Operation {
  const o = byId.get(id)
  if (!o) throw new Error(`unknown operation ${id}`)
  return o
}

export function operationForRoute(method: string, path: string): Operation | undefined {
  return byRoute.get(`${method} ${path}`)
}
