import { t } from 'elysia'
import { BodyInteger, DateTime, Nullable, StyleId } from '../../http/schemas'

/** 5 GB, read as 5 GiB: the largest upload accepted. */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 3

const Language = t.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$|^auto$', error: 'must be a language code such as en or pt-BR, or auto' })

export const CreateUploadRequest = t.Object(
  {
    fileName: t.String({ minLength: 1, maxLength: 500, error: 'must be a string of 1 to 500 characters' }),
    contentType: t.String({ minLength: 3, maxLength: 255, description: 'MIME type; audio/* and video/* are accepted', error: 'must be a MIME type such as audio/mpeg' }),
    fileSize: t.Optional(BodyInteger({ minimum: 0, description: `bytes; at most ${MAX_UPLOAD_BYTES} (5 GB)`, error: 'must be a whole number of bytes, sent as a JSON number' })),
    styleId: t.Optional(StyleId),
    language: t.Optional(Language),
  },
  { additionalProperties: false, title: 'CreateUploadRequest' },
)

export const Upload = t.Object(
  {
    noteId: t.String(),
    uploadUrl: t.String({ format: 'uri' }),
    method: t.Literal('PUT'),
    headers: t.Record(t.String(), t.String()),
    filePath: t.String(),
    contentType: t.String(),
    expiresAt: DateTime,
    next: t.String(),
    notice: t.Optional(t.String()),
  },
  { title: 'Upload' },
)

export const UploadAccepted = t.Object(
  {
    noteId: t.String(),
    status: t.String(),
    creditsCharged: t.Integer(),
    durationSeconds: Nullable(t.Number()),
    poll: t.String(),
    alreadyCompleted: t.Boolean(),
  },
  { title: 'UploadAccepted' },
)

export const TranscriptionRequest = t.Object(
  {
    audioUrl: t.String({ format: 'uri', maxLength: 2048, description: 'publicly reachable https URL', error: 'must be an absolute https URL' }),
    language: t.Optional(Language),
    timeoutSeconds: t.Optional(BodyInteger({ minimum: 30, maximum: 1800, default: 300, error: 'must be a whole number from 30 to 1800, sent as a JSON number' })),
  },
  { additionalProperties: false, title: 'TranscriptionRequest' },
)

export const TranscriptionResult = t.Object(
  { transcript: t.String(), language: t.String(), durationSeconds: Nullable(t.Number()), creditsCharged: t.Integer(), notice: t.Optional(t.String()) },
  { title: 'TranscriptionResult' },
)

export const SummaryRequest = t.Object(
  {
    text: t.String({ minLength: 1, maxLength: 500_000, error: 'must be a string of 1 to 500000 characters' }),
    styleId: t.Optional(StyleId),
  },
  { additionalProperties: false, title: 'SummaryRequest' },
)

const summaryFields = {
  title: t.String(),
  summary: t.String(),
  styleId: t.String(),
  structuredContent: Nullable(t.Record(t.String(), t.Unknown())),
  creditsCharged: t.Integer(),
  notice: t.Optional(t.String()),
}

export const SummaryResult = t.Object(summaryFields, { title: 'SummaryResult' })

export const YoutubeSummaryRequest = t.Object(
  {
    youtubeUrl: t.String({ format: 'uri', maxLength: 2048, error: 'must be a YouTube video URL' }),
    styleId: t.Optional(StyleId),
  },
  { additionalProperties: false, title: 'YoutubeSummaryRequest' },
)

export const YoutubeSummaryResult = t.Object(
  { ...summaryFields, youtubeUrl: t.String({ format: 'uri' }), durationSeconds: Nullable(t.Number()) },
  { title: 'YoutubeSummaryResult' },
)
