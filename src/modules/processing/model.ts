import { ApiError } from '../../http/errors'
import { t, type Static } from 'elysia'
import { STYLE_IDS } from '../../engines/llm/engine'
import { Integer, Nullable } from '../../http/schemas'
import { Note } from '../notes/model'

/** The summary styles as a schema: one of the styles the summary engines know, `note` when omitted. */
export const StyleId = t.Union(STYLE_IDS.map(id => t.Literal(id)), {
  default: 'note',
  title: 'StyleId',
  description: 'the style of the summary and its structured content',
  error: `must be one of ${STYLE_IDS.join(', ')}`,
})

/** A language code such as en or pt-BR, or auto. */
export const Language = t.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$|^auto$', error: 'must be a language code such as en or pt-BR, or auto' })

/** How many people speak, as the submitter knows it: a count, or bounds (each 1–32). */
export const SpeakersHint = t.Union([
  Integer({ minimum: 1, maximum: 32 }),
  t.Object({ min: t.Optional(Integer({ minimum: 1, maximum: 32 })), max: t.Optional(Integer({ minimum: 1, maximum: 32 })) }, { additionalProperties: false }),
], {
  description: 'how many people speak, for speaker diarization: a count (2), or bounds ({"min":2,"max":4}); by default the engine estimates it',
  error: 'must be a whole number from 1 to 32, or {"min":n,"max":m} with each from 1 to 32',
})
export type SpeakersHint = Static<typeof SpeakersHint>

/** The hint as the diarization engines take it ({exact} or {min, max}), stored as JSON; null when none. */
export function speakersHintJson(hint: SpeakersHint | undefined): string | null {
  if (hint === undefined) return null
  if (typeof hint === 'number') return JSON.stringify({ exact: hint })
  if (hint.min !== undefined && hint.max !== undefined && hint.min > hint.max) {
    throw new ApiError('invalid_request', `speakers.min (${hint.min}) is more than speakers.max (${hint.max}); send min at most max.`, { details: [{ field: 'speakers', issue: 'min above max' }] })
  }
  return JSON.stringify(hint)
}

export const TranscriptionRequest = t.Object(
  {
    audioUrl: t.String({ format: 'uri', maxLength: 2048, description: 'publicly reachable https URL', error: 'must be an absolute https URL' }),
    language: t.Optional(Language),
    timeoutSeconds: t.Optional(Integer({ minimum: 30, maximum: 1800, default: 300, error: 'must be a whole number from 30 to 1800, sent as a JSON number' })),
  },
  { additionalProperties: false, title: 'TranscriptionRequest' },
)

export const TranscriptionResult = t.Object(
  { transcript: t.String(), language: t.String(), durationSeconds: Nullable(t.Number()), creditsCharged: Integer(), notice: t.Optional(t.String()) },
  { title: 'TranscriptionResult', description: 'A transcript made from a media URL, returned inline.' },
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
  creditsCharged: Integer(),
  notice: t.Optional(t.String()),
}

export const SummaryResult = t.Object(summaryFields, { title: 'SummaryResult', description: 'A summary of text in the requested style.' })

/** `createNoteSummary`'s body: the style the note's summary is made again in. */
export const NoteSummaryRequest = t.Object(
  { styleId: StyleId },
  { additionalProperties: false, title: 'NoteSummaryRequest' },
)

/** `createNoteSummary`'s answer: the note as it stands once the summary is queued, and what was charged. */
export const NoteSummaryAccepted = t.Object(
  {
    ...Note.properties,
    creditsCharged: Integer(),
    notice: t.Optional(t.String({ description: 'present on sandbox keys: the summary is fixed sample output and nothing was charged' })),
  },
  { title: 'NoteSummaryAccepted', description: 'A note whose summary is being made again (`status` Summarizing until it is done; a sandbox note is Done at once), with what was charged.' },
)

export const YoutubeSummaryRequest = t.Object(
  {
    youtubeUrl: t.String({ format: 'uri', maxLength: 2048, error: 'must be a YouTube video URL' }),
    styleId: t.Optional(StyleId),
  },
  { additionalProperties: false, title: 'YoutubeSummaryRequest' },
)

export const YoutubeSummaryResult = t.Object(
  { ...summaryFields, youtubeUrl: t.String({ format: 'uri' }), durationSeconds: Nullable(t.Number()) },
  { title: 'YoutubeSummaryResult', description: 'A summary of a video link: every SummaryResult field, the link and the video\'s length.' },
)
