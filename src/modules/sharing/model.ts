import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'

/** The transcript files a share link may offer for download (the note's own export, reused). */
const SHARE_FORMATS = ['txt', 'srt', 'vtt'] as const
export type ShareFormat = (typeof SHARE_FORMATS)[number]

const Format = t.Union(SHARE_FORMATS.map(f => t.Literal(f)), { error: `must be one of ${SHARE_FORMATS.join(', ')}` })

export const CreateNoteShareRequest = t.Object(
  {
    showSummary: t.Optional(t.Boolean({ description: 'show the summary (default false)' })),
    showSpeakers: t.Optional(t.Boolean({ description: 'show the speakers\' names; without them each is "Speaker A", "Speaker B", … (default false)' })),
    showRecording: t.Optional(t.Boolean({ description: 'offer the recording in a player (default false)' })),
    formats: t.Optional(t.Array(Format, { maxItems: SHARE_FORMATS.length, uniqueItems: true, description: 'transcript files offered for download (default none)', error: `must be a list of distinct formats among ${SHARE_FORMATS.join(', ')}` })),
    expiresAt: t.Optional(t.String({ format: 'date-time', description: 'when the link stops opening (default never); must be in the future', error: 'must be a date-time such as 2026-12-01T12:00:00Z' })),
    passphrase: t.Optional(t.String({ minLength: 6, maxLength: 200, description: 'asked before the page opens (6 to 200 characters); kept only as a hash', error: 'must be a string of 6 to 200 characters' })),
  },
  { additionalProperties: false, title: 'CreateNoteShareRequest' },
)
export type CreateNoteShareRequest = Static<typeof CreateNoteShareRequest>

const shareFields = {
  id: t.String({ examples: ['shr_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
  noteId: t.String(),
  showSummary: t.Boolean(),
  showSpeakers: t.Boolean(),
  showRecording: t.Boolean(),
  formats: t.Array(Format),
  expiresAt: Nullable(DateTime),
  hasPassphrase: t.Boolean(),
  createdAt: DateTime,
  revokedAt: Nullable(DateTime),
  openCount: Integer({ minimum: 0, description: 'how many times the page was opened' }),
  lastOpenedAt: Nullable(DateTime),
}

export const NoteShare = t.Object(shareFields, { title: 'NoteShare', description: 'A share link of a note, without its token (shown once, when made).' })
export type NoteShare = Static<typeof NoteShare>

export const CreatedNoteShare = t.Object(
  { ...shareFields, url: t.String({ description: 'the link to send: it holds the token, which is shown only now and kept only as a hash' }) },
  { title: 'CreatedNoteShare', description: 'A new share link with its URL (the only time the token is shown).' },
)
export type CreatedNoteShare = Static<typeof CreatedNoteShare>

export const NoteShareList = t.Object({ data: t.Array(NoteShare) }, { title: 'NoteShareList', description: 'A note\'s share links, newest first, revoked and expired ones included.' })

export const ShareParams = t.Object({
  id: t.String({ minLength: 1, maxLength: 200, description: 'the note id' }),
  shareId: t.String({ minLength: 1, maxLength: 200, description: 'the share link\'s id' }),
})
