import { t } from 'elysia'
import { CloneType, Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ApiError, ERROR_STATUS, detailsFromValueErrors, validationMessage, type ErrorDetail } from './errors'
import { textDetails } from './text-check'

/** Shapes shared by several modules. */
export const DateTime = t.String({ format: 'date-time', examples: ['2026-11-22T10:00:00.000Z'] })
export const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(s: T) => t.Union([s, t.Null()])

export const IdParams = t.Object({ id: t.String({ minLength: 1, maxLength: 200, description: 'the resource id' }) })

/**
 * An integer: a JSON number only, published as `type: integer`. Elysia's `t.Integer` is a union that
 * also accepts the string "300" (and is published as one); a body field typed integer must be sent as
 * a number, query parameters are turned into numbers by `queryValidator`, and responses carry numbers.
 */
export const Integer = (options?: Parameters<typeof Type.Integer>[0]) => Type.Integer(options)

export const ErrorEnvelopeSchema = t.Object(
  {
    error: t.Object({
      type: t.String({ examples: ['invalid_request_error'] }),
      code: t.Union(Object.keys(ERROR_STATUS).map(c => t.Literal(c))),
      message: t.String(),
      doc_url: t.String({ format: 'uri' }),
      details: t.Optional(t.Array(t.Object({ field: t.String(), issue: t.String() }))),
      retry_after_seconds: t.Optional(Integer()),
      request_id: t.Optional(t.String()),
    }),
  },
  { title: 'Error', description: 'Every failure: the envelope with a stable `code` to branch on and a `message` for people.' },
)

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
  const names = Object.keys(schema.properties)
  const arrays = Object.keys(arrayQueryParams(schema) ?? {})
  const check = compileCheck(schema)
  return query => {
    // a repeatable parameter sent once is a list of one
    for (const k of arrays) if (typeof query[k] === 'string') query[k] = [query[k]]
    for (const k of numeric) {
      const v = query[k]
      if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) query[k] = Number(v)
    }
    // the declared parameters' text the database cannot hold (text-check.ts); others are never read
    const unfit = names.flatMap(k => (query[k] === undefined ? [] : textDetails({ [k]: query[k] }, 'query')))
    if (!check.Check(query) || unfit.length) {
      const details = valueErrorDetails(check, query, 'query')
      for (const d of unfit) if (!details.some(x => x.field === d.field)) details.push(d)
      throw new ApiError('invalid_request', validationMessage('query', details), { details })
    }
    return query as Static<T>
  }
}

/**
 * The query parameters a schema declares as arrays (`tag=a&tag=b`), as Elysia's query parser takes
 * them; undefined when there are none. Elysia, not given the schema (see queryValidator), keeps only
 * the last of repeated parameters unless told which ones repeat.
 */
export function arrayQueryParams(schema: TObject): Record<string, 1> | undefined {
  const keys = Object.entries(schema.properties).filter(([, s]) => (s as { type?: string }).type === 'array').map(([k]) => k)
  return keys.length ? Object.fromEntries(keys.map(k => [k, 1 as const])) : undefined
}

/** The schema with every `uniqueItems` taken out (a deep copy; the schema itself is left as it is). */
function withoutUniqueItems<T extends TSchema>(schema: T): { relaxed: T; had: boolean } {
  const relaxed = CloneType(schema)
  let had = false
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return
    if (Array.isArray(node)) return node.forEach(visit)
    const n = node as Record<string, unknown>
    if (n.uniqueItems === true) {
      delete n.uniqueItems
      had = true
    }
    for (const v of Object.values(n)) visit(v)
  }
  visit(relaxed)
  return { relaxed, had }
}

/**
 * TypeBox's compiled check, for values a client sends, in an order that never lets a hostile value
 * cost more than reading it once. TypeBox checks `uniqueItems` before the items themselves, by
 * hashing each item with a 64-bit FNV-1a computed in BigInt arithmetic, byte by byte: one 4 MB
 * string in `events` (whose items are two short names) held the event loop for seconds (issue 29,
 * found by the standing fuzz). So a schema that has `uniqueItems` is first checked without it: only a
 * value whose every item is valid (here, one of a few short names) is hashed for uniqueness.
 */
export function compileCheck<T extends TSchema>(schema: T): TypeCheck<T> {
  return lazyCheck(() => compileNow(schema))
}

/**
 * A TypeCheck built on its first use, not when it is declared: compiling the operations' checks at
 * start-up took about 17 ms of the cold start (docs/decisions.md, "Cold start"), and most never run.
 */
export function lazyCheck<T extends TSchema>(build: () => TypeCheck<T>): TypeCheck<T> {
  let built: TypeCheck<T> | undefined
  const real = () => (built ??= build())
  return new Proxy(Object.create(null) as TypeCheck<T>, {
    get(_, key) {
      const c = real()
      const v: unknown = Reflect.get(c, key, c)
      return typeof v === 'function' ? v.bind(c) : v
    },
    has: (_, key) => Reflect.has(real(), key),
    getPrototypeOf: () => Object.getPrototypeOf(real()),
  })
}

function compileNow<T extends TSchema>(schema: T): TypeCheck<T> {
  const full = TypeCompiler.Compile(schema)
  const { relaxed, had } = withoutUniqueItems(schema)
  if (!had) return full
  const first = TypeCompiler.Compile(relaxed)
  return Object.assign(Object.create(Object.getPrototypeOf(full)) as TypeCheck<T>, full, {
    Check: (value: unknown): value is Static<T> => first.Check(value) && full.Check(value),
    Errors: (value: unknown) => (first.Check(value) ? full.Errors(value) : first.Errors(value)),
  })
}

/**
 * At most this many of the validator's errors are read for a refusal: more than any honest request
 * has fields at fault, and a hostile value is not walked further (the validator's errors are produced
 * one at a time, as they are read).
 */
const MAX_ERRORS_READ = 20

/** The details of a value the check refused, from at most MAX_ERRORS_READ of its errors; never a copy or a print of the value. */
export function valueErrorDetails<T extends TSchema>(check: TypeCheck<T>, value: unknown, part: string): ErrorDetail[] {
  const errors = []
  for (const e of check.Errors(value)) {
    errors.push(e)
    if (errors.length >= MAX_ERRORS_READ) break
  }
  return detailsFromValueErrors(part, errors)
}

/**
 * A check of a JSON body against `schema` that names the fields at fault (400 `invalid_request`),
 * run before each operation's handler (contract.ts `routeOptions`) in place of Elysia's: Elysia's
 * validation error prints the whole value into its message with JSON.stringify (indented), which for
 * a deeply nested body took seconds and then overflowed the stack. Defaults are not filled in: the
 * services apply their own, as they must for MCP's calls.
 */
export function bodyValidator(schema: TObject): (body: unknown) => void {
  const check = compileCheck(schema)
  return body => {
    if (check.Check(body)) return
    const details = valueErrorDetails(check, body, 'body')
    throw new ApiError('invalid_request', validationMessage('body', details), { details })
  }
}
