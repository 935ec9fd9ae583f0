import { t } from 'elysia'
import { Integer, Nullable } from '../../http/schemas'

/** A date alone (`2026-03-01`) or a date-time; a date alone as `to` means the end of that day. */
const DateBound = (what: string) => t.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  maxLength: 40,
  description: `${what}, a date (2026-03-01) or an ISO 8601 date-time (2026-03-01T09:00:00Z), on the note's dateCreated`,
  error: 'must be a date such as 2026-03-01 or an ISO 8601 date-time such as 2026-03-01T09:00:00Z',
})

export const LibraryQuestionRequest = t.Object(
  {
    question: t.String({ minLength: 1, maxLength: 2000, error: 'must be a string of 1 to 2000 characters' }),
    folderId: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 200, description: 'only the notes of this folder; null: the notes at the top level' }))),
    tag: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'only the notes carrying the tag of this name (without regard to case)' })),
    from: t.Optional(DateBound('only notes created at or after this')),
    to: t.Optional(DateBound('only notes created before this (a date alone: up to the end of that day)')),
  },
  { additionalProperties: false, title: 'LibraryQuestionRequest' },
)

const Citation = t.Object(
  {
    noteId: t.String(),
    title: t.String(),
    start: Nullable(t.Number({ description: 'seconds from the start of the recording; null for a note without times (made from text)' })),
    end: Nullable(t.Number()),
    speaker: Nullable(t.String({ description: 'who said it (the name shown), when the recording was diarized' })),
    text: t.String({ description: 'the passage cited' }),
    url: t.String({ description: 'the note page at that moment: /notes/{id}?t=<start>' }),
  },
  { title: 'Citation' },
)

export const LibraryAnswer = t.Object(
  {
    question: t.String(),
    answer: t.String(),
    citations: t.Array(Citation, { description: 'the passages the answer comes from, best first; empty when nothing in the library answers' }),
    creditsCharged: Integer(),
    notice: t.Optional(t.String({ description: 'present on sandbox answers: the answer is fixed and nothing was charged' })),
  },
  { title: 'LibraryAnswer', description: 'An answer to a question asked across the library, with the passages it comes from.' },
)
