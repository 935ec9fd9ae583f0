/**
 * fast-check arbitraries derived from the JSON schemas of an OpenAPI 3.1 document (the one a server
 * serves at GET /v1/openapi.json): `validValue` gives values the schema accepts, `hostileValue` the
 * ones a client should be refused for with a clear 400 and never a 500 or a stall — wrong types,
 * each bound ±1, empty and huge values, NUL and lone surrogates, deeply nested JSON, unknown fields.
 *
 * Written over fast-check's combinators rather than taken from a library: json-schema-fast-check (the
 * one package that maps JSON Schema to fast-check) is a 0.0.x release on fast-check 1 and faker 4,
 * unmaintained since 2019, and knows neither OpenAPI 3.1's `$ref` to components nor TypeBox's
 * `anyOf` with `null`; the mapping below is the part of JSON Schema the served document uses.
 *
 * JSON text that no JavaScript value serialises to (a depth of 40,000, a number literal beyond
 * double range) is a `RawJson`: `jsonText` writes it into the body as it is, and the generator never
 * builds it as a nested value (the test process's own JSON.stringify would overflow its stack).
 */
import fc from 'fast-check'

export type Schema = Record<string, any>
export interface OpenApiDocument {
  paths: Record<string, Record<string, any>>
  components: { schemas: Record<string, Schema> }
}

/**
 * What the schemas cannot say, by property or parameter name: values that exist on the server under
 * test (the caller's folder ids for `folderId`) or that its rules take (`audio/wav` for
 * `contentType`). A generated value of such a field is one of them half of the time.
 */
export type Known = Record<string, readonly unknown[]>

/** The document, and the known values of one library. */
export interface SchemaContext {
  doc: OpenApiDocument
  known: Known
}

/** JSON text sent as it is; `label` is what a failure message shows of it. */
export class RawJson {
  constructor(readonly text: string, readonly label: string) {}
  toString() { return this.label }
}

/** The nesting depths of issue 29's finding 1 (20,000 levels answered after 4 s; 40,000 a 500). */
const DEEP_LEVELS = [20_000, 40_000] as const

const deepArray = (depth: number) => new RawJson('['.repeat(depth) + ']'.repeat(depth), `[ nested ${depth} deep ]`)
const deepObject = (depth: number) => new RawJson('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `{"a": nested ${depth} deep }`)
const deepValue = fc.oneof(fc.constantFrom(...DEEP_LEVELS).map(deepArray), fc.constantFrom(...DEEP_LEVELS).map(deepObject))

/** The body text of `value`: JSON.stringify, with each RawJson written in place of its placeholder. */
export function jsonText(value: unknown): string {
  const raws: RawJson[] = []
  const text = JSON.stringify(value, (_k, v) => (v instanceof RawJson ? `\u0000raw${raws.push(v) - 1}\u0000` : v))
  if (value instanceof RawJson) return value.text
  return raws.length === 0 ? text : text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i) => raws[Number(i)]!.text)
}

/** The schema `$ref` points at, or the schema itself. */
export function resolve(ctx: SchemaContext, schema: Schema): Schema {
  let s = schema
  while (typeof s.$ref === 'string') s = ctx.doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] ?? {}
  return s
}

const INT32 = 2 ** 31 - 1
/** How long a valid string of no stated maximum is made (values at the maximum itself come from the boundaries). */
const TYPICAL_LENGTH = 40

function validString(s: Schema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? TYPICAL_LENGTH, TYPICAL_LENGTH))
  const fits = (v: string) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity)
  if (s.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(Date.UTC(2100, 0)), noInvalidDate: true }).map(d => d.toISOString())
  if (s.format === 'uri') return fc.webUrl().filter(fits)
  if (typeof s.pattern === 'string') return fc.stringMatching(new RegExp(s.pattern)).filter(fits)
  return fc.oneof(
    fc.string({ minLength, maxLength, unit: 'grapheme-ascii' }),
    fc.string({ minLength, maxLength, unit: 'grapheme' }).filter(fits),
  )
}

function validInteger(s: Schema): fc.Arbitrary<number> {
  const min = s.minimum ?? -INT32
  const max = s.maximum ?? INT32
  if (min >= -INT32 && max <= INT32) return fc.integer({ min, max })
  // beyond 32 bits (offset's maximum is 2^53 - 1): small values, and the bounds themselves
  return fc.oneof(fc.integer({ min: Math.max(min, -INT32), max: Math.min(max, INT32) }), fc.constantFrom(min, max))
}

/** A value `schema` accepts (or, for a field of `known` values, one of them half of the time). */
export function validValue(ctx: SchemaContext, schema: Schema, name?: string): fc.Arbitrary<unknown> {
  const s = resolve(ctx, schema)
  const known = name === undefined ? undefined : ctx.known[name]
  const own = generated(ctx, s)
  // the schema's own examples, and the known values, beside what its constraints allow
  const given = [...(known ?? []), ...(Array.isArray(s.examples) ? s.examples : [])]
  return given.length ? fc.oneof(own, fc.constantFrom(...given)) : own
}

function generated(ctx: SchemaContext, s: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum)
  if ('const' in s) return fc.constant(s.const)
  const members = s.anyOf ?? s.oneOf
  if (Array.isArray(members)) return fc.oneof(...members.map((m: Schema) => validValue(ctx, m)))
  switch (s.type) {
    case 'string': return validString(s)
    case 'integer': return validInteger(s)
    case 'number': return fc.oneof(validInteger(s), fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true }))
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': {
      const items = validValue(ctx, s.items ?? {})
      const bounds = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, 5) }
      return s.uniqueItems ? fc.uniqueArray(items, { ...bounds, selector: v => JSON.stringify(v) }) : fc.array(items, bounds)
    }
    case 'object': return validObject(ctx, s)
    default: return fc.jsonValue({ maxDepth: 2 })
  }
}

function validObject(ctx: SchemaContext, s: Schema): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, Schema> = s.properties ?? {}
  const model = Object.fromEntries(Object.entries(props).map(([k, p]) => [k, validValue(ctx, p, k)]))
  const record = fc.record(model, { requiredKeys: s.required ?? [] })
  return s.minProperties ? record.filter(o => Object.keys(o).length >= s.minProperties) : record
}

/** A NUL, or each kind of lone surrogate, put inside a string the schema would otherwise take. */
function brokenText(s: Schema): fc.Arbitrary<string> {
  const at = (base: string, bad: string, where: number) => base.slice(0, where % (base.length + 1)) + bad + base.slice(where % (base.length + 1))
  return fc.tuple(fc.oneof(validString({ ...s, pattern: undefined, format: undefined }), fc.constant('')), fc.constantFrom('\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', 'a\uDC00\uD800b'), fc.nat())
    .map(([base, bad, where]) => at(base, bad, where))
}

/** Values of every other JSON type than `type`. */
function wrongTypes(type: string | undefined): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.constantFrom('', '1', 'true', 'null', '[]', '{}'),
    number: fc.constantFrom(0, -1, 1.5, 1e308, -0),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.constantFrom([], [1], [''], [null], [[]]),
    object: fc.constantFrom<unknown>({}, { a: 1 }, { '': null }, new RawJson('{"__proto__":{"polluted":1}}', '{"__proto__":{"polluted":1}}'), { constructor: { prototype: {} } }),
  }
  const other = Object.entries(all).filter(([k]) => k !== type && !(type === 'integer' && k === 'number')).map(([, a]) => a)
  return fc.oneof(...other)
}

/** Strings at, just past and far past the bounds, and strings people and programs write oddly. */
function hostileString(s: Schema): fc.Arbitrary<unknown> {
  const odd = ['', ' ', ' padded ', '\t\n', '\u202Eevil', 'zero\u200Bwidth', 'e\u0301', '🎙️👩‍👩‍👧', '../../etc/passwd', '%00', '%s%n', '<script>', "'; DROP TABLE notes; --", 'null', 'undefined']
  const bounds: string[] = []
  if (s.minLength > 0) bounds.push('x'.repeat(s.minLength - 1))
  if (typeof s.maxLength === 'number') bounds.push('x'.repeat(s.maxLength), 'x'.repeat(s.maxLength + 1), '€'.repeat(s.maxLength + 1))
  const formats: string[] = s.format === 'date-time'
    ? ['2026-13-45T99:00:00Z', '0000-01-01T00:00:00Z', '+275760-09-13T00:00:00.001Z', '2026-02-30T00:00:00Z', '1', 'now']
    : s.format === 'uri' ? ['http://', 'https://[::1', 'javascript:alert(1)', 'file:///etc/passwd', 'http://127.0.0.1:0/', 'http://' + 'a'.repeat(300) + '.example/'] : []
  const enums: string[] = Array.isArray(s.enum) ? s.enum.flatMap((e: string) => [e.toUpperCase(), `${e} `, `${e}\u0000`]).concat(['not-one-of-them']) : []
  return fc.oneof(
    { arbitrary: fc.constantFrom(...odd, ...formats, ...enums), weight: 3 },
    { arbitrary: bounds.length ? fc.constantFrom(...bounds) : fc.constant('x'.repeat(1_000_000)), weight: 2 },
    { arbitrary: brokenText(s), weight: 3 },
    { arbitrary: fc.constant('x'.repeat(1_000_000)), weight: 1 },
  )
}

function hostileNumber(s: Schema): fc.Arbitrary<unknown> {
  const edges: unknown[] = [1.5, -0, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 1e-300, -1]
  if (typeof s.minimum === 'number') edges.push(s.minimum - 1, s.minimum)
  if (typeof s.maximum === 'number') edges.push(s.maximum + 1, s.maximum)
  return fc.oneof(fc.constantFrom(...edges), fc.constantFrom(new RawJson('1e400', '1e400'), new RawJson('-1e400', '-1e400'), new RawJson('1' + '0'.repeat(400), '1 and 400 zeros'), new RawJson('0.' + '0'.repeat(400) + '1', '0.(400 zeros)1')))
}

function hostileArray(ctx: SchemaContext, s: Schema): fc.Arbitrary<unknown> {
  const item = validValue(ctx, s.items ?? {})
  return fc.oneof(
    fc.array(hostileValue(ctx, s.items ?? {}), { minLength: 1, maxLength: 3 }),
    fc.array(item, { minLength: (s.maxItems ?? 1000) + 1, maxLength: (s.maxItems ?? 1000) + 1 }),
    s.uniqueItems ? item.map(v => [v, v]) : fc.constant([]),
    fc.constant([]),
    // one huge item: an array's checks (uniqueItems hashes each item) must not cost in its size
    fc.constantFrom(['x'.repeat(1_000_000)], ['x'.repeat(4_000_000)]),
  )
}

/** An object with one field hostile, a required field missing, or unknown fields added. */
function hostileObject(ctx: SchemaContext, s: Schema): fc.Arbitrary<unknown> {
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>)
  const base = validObject(ctx, s)
  const unknownKeys = fc.constantFrom('unknown', '__proto__', 'constructor', '', 'a'.repeat(10_000), 'x\u0000', '\uD800')
  const withUnknown = fc.tuple(base, fc.dictionary(unknownKeys, fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 }))
    .map(([o, extra]) => { const r: Record<string, unknown> = { ...o }; for (const [k, v] of Object.entries(extra)) Object.defineProperty(r, k, { value: v, enumerable: true, writable: true, configurable: true }); return r })
  const choices: fc.Arbitrary<unknown>[] = [withUnknown, fc.constant({})]
  if (props.length) {
    const oneBad = fc.tuple(base, fc.constantFrom(...props)).chain(([o, [k, p]]) => hostileValue(ctx, p).map(v => ({ ...o, [k]: v })))
    choices.push(oneBad, oneBad, oneBad)
  }
  for (const k of s.required ?? []) choices.push(base.map(o => { const r = { ...o }; delete r[k]; return r }))
  return fc.oneof(...choices)
}

/** A value `schema` should be refused for (or, at a bound, accepted without trouble). */
export function hostileValue(ctx: SchemaContext, schema: Schema): fc.Arbitrary<unknown> {
  const s = resolve(ctx, schema)
  const members: Schema[] | undefined = s.anyOf ?? s.oneOf
  const type: string | undefined = members ? undefined : s.type
  const ofType: fc.Arbitrary<unknown>[] = []
  if (members) ofType.push(...members.map(m => hostileValue(ctx, m)))
  else if (type === 'string') ofType.push(hostileString(s))
  else if (type === 'integer' || type === 'number') ofType.push(hostileNumber(s))
  else if (type === 'array') ofType.push(hostileArray(ctx, s))
  else if (type === 'object') ofType.push(hostileObject(ctx, s))
  return fc.oneof(
    { arbitrary: ofType.length ? fc.oneof(...ofType) : fc.jsonValue({ maxDepth: 3 }), weight: 6 },
    { arbitrary: wrongTypes(type), weight: 2 },
    { arbitrary: deepValue, weight: 1 },
  )
}

/** Mostly valid, sometimes hostile: a field of a body, or a parameter. */
export function fieldValue(ctx: SchemaContext, schema: Schema, name?: string): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: validValue(ctx, schema, name), weight: 3 }, { arbitrary: hostileValue(ctx, schema), weight: 2 })
}

/** Whole bodies that are not what any JSON route takes: top-level nesting (finding 1), other types, broken JSON. */
export const hostileJsonBody: fc.Arbitrary<RawJson> = fc.oneof(
  { arbitrary: deepValue, weight: 3 },
  {
    arbitrary: fc.constantFrom('', ' ', '{', '{"a":', '[', 'nul', 'null', '0', '"x"', '[]', '{"a":1,"a":2}', '\u0000', '{"\\ud800":1}', '\uFEFF{}', '{}garbage', '1e400')
      .map(t => new RawJson(t, JSON.stringify(t))),
    weight: 4,
  },
)
