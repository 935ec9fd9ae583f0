/** The scopes a credential may hold, each with what it allows: the one list (API keys, OAuth, MCP, the docs). */
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
