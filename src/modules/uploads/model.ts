import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'
import { Language, SpeakersHint, StyleId } from '../processing/model'

/**
 * How long an upload's signed URL (`uploadUrl`, `expiresAt`) stays valid. After it, no PUT can start:
 * the retention sweep treats an upload still awaiting its file after this long as abandoned.
 */
export const UPLOAD_TTL_MS = 60 * 60 * 1000

/** 5 GB, read as 5 GiB: the largest upload accepted. */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3

export const CreateUploadRequest = t.Object(
  {
    fileName: t.String({ minLength: 1, maxLength: 500, error: 'must be a string of 1 to 500 characters' }),
    contentType: t.String({ minLength: 3, maxLength: 255, description: 'MIME type; audio/* and video/* are accepted', error: 'must be a MIME type such as audio/mpeg' }),
    fileSize: t.Optional(Integer({ minimum: 0, description: `bytes; at most ${MAX_UPLOAD_BYTES} (5 GB)`, error: 'must be a whole number of bytes, sent as a JSON number' })),
    styleId: t.Optional(StyleId),
    language: t.Optional(Language),
    speakers: t.Optional(SpeakersHint),
  },
  { additionalProperties: false, title: 'CreateUploadRequest' },
)
export type CreateUploadRequest = Static<typeof CreateUploadRequest>

export const Upload = t.Object(
  {
    noteId: t.String({ description: 'the created note' }),
    uploadUrl: t.String({ format: 'uri', description: 'signed URL to PUT the file to' }),
    method: t.Literal('PUT'),
    headers: t.Record(t.String(), t.String(), { description: 'headers to send with the PUT' }),
    filePath: t.String(),
    contentType: t.String(),
    expiresAt: DateTime,
    next: t.String(),
    notice: t.Optional(t.String({ description: 'present on sandbox keys' })),
  },
  { title: 'Upload', description: 'A started upload: the note it creates and where to PUT the file.' },
)

export const UploadAccepted = t.Object(
  {
    noteId: t.String(),
    status: t.String(),
    creditsCharged: Integer(),
    durationSeconds: Nullable(t.Number()),
    poll: t.String({ description: 'the status URL to poll until processing ends' }),
    alreadyCompleted: t.Boolean(),
  },
  { title: 'UploadAccepted', description: 'A completed upload: what was charged, and where to follow processing.' },
)
export type UploadAccepted = Static<typeof UploadAccepted>
