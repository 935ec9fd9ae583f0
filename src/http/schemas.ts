import { t } from 'elysia'
import { ERROR_STATUS } from './errors'

/** Shapes shared by several modules. */
export const DateTime = t.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] })
export const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

export const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 200, description: 'the resource id' }) })

export const STYLE_IDS = ['note', 'transcript', 'bulletpoints', 'meeting-notes'] as const
export const StyleId = t.Union([t.Literal('note'), t.Literal('transcript'), t.Literal('bulletpoints'), t.Literal('meeting-notes')], {
  default: 'note',
  error: `must be one of ${STYLE_IDS.join(', ')}`,
})

export const ErrorEnvelopeSchema = t.Object(
  {
    error: t.Object({
      type: t.String({ examples: ['invalid_request_error'] }),
      code: t.Union(Object.keys(ERROR_STATUS).map(c => t.Literal(c))),
      message: t.String(),
      doc_url: t.String({ format: 'uri' }),
      details: t.Optional(t.Array(t.Object({ field: t.String(), issue: t.String() }))),
      retry_after_seconds: t.Optional(t.Integer()),
      request_id: t.Optional(t.String()),
    }),
  },
  { $id: '#/components/schemas/Error', title: 'Error' },
)
