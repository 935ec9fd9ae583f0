import { t } from 'elysia'
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ApiError, ERROR_STATUS, detailsFromValueErrors, validationMessage } from './errors'

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

/**
 * An integer field of a JSON body: a JSON number only. Elysia's `t.Integer` would also accept the
 * string "300" and convert it; a body field typed integer must be sent as a number.
 */
export const BodyInteger = (options: Parameters<typeof Type.Integer>[0]) => Type.Integer(options)

/**
 * An integer query parameter. Plain TypeBox, not Elysia's `t.Integer` (which is a union that coerces
 * strings itself), so `validatedQuery` can see that it is numeric.
 */
export const QueryInteger = (options: Parameters<typeof Type.Integer>[0]) => Type.Integer(options)

/**
 * A check of the query string against `schema` (numeric parameters turned into numbers first) that
 * names every parameter at fault, and returns the typed query. Elysia is not given the schema itself:
 * its own coercion re-decodes the query on every request and reports a number out of bounds without
 * saying which parameter held it.
 */
export function queryValidator<T extends TObject>(schema: T): (query: Record<string, unknown>) => Static<T> {
  const numeric = Object.entries(schema.properties)
    .filter(([, s]) => (s as { type?: string }).type === 'integer' || (s as { type?: string }).type === 'number')
    .map(([k]) => k)
  const check = TypeCompiler.Compile(schema)
  return query => {
    for (const k of numeric) {
      const v = query[k]
      if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) query[k] = Number(v)
    }
    if (!check.Check(query)) {
      const details = detailsFromValueErrors('query', [...check.Errors(query)])
      throw new ApiError('invalid_request', validationMessage('query', details), { details })
    }
    return query as Static<T>
  }
}
