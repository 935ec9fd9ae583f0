/**
 * How large a request body's structure may be, checked on its text before it is parsed or validated.
 *
 * The byte limits (http/body-limit.ts) bound how much is read, not what it holds: 40 KB of `[[[[…]]]]`
 * is 20,000 levels, which JSON.parse reads in a millisecond, but which Elysia's validation error then
 * printed with JSON.stringify's indentation (800 MB of spaces, seconds during which the process
 * answered nobody) and which any recursive walk of the value overflows the stack on. So every route
 * that reads a body refuses one whose shape passes these limits, before anything walks it: the JSON
 * routes (http/json-body.ts), MCP, OAuth's registration, and the forms of the pages and of OAuth.
 *
 * The limits are far beyond any honest body: the deepest body an operation takes is 2 levels (an
 * object holding an array), an MCP message 4 (message, params, arguments, a field), an OAuth client's
 * metadata 4 (a JWK set); the most items any takes are a few dozen (a webhook's events, a client's
 * redirect URIs); a form of the pages or of OAuth has at most 20 fields.
 */
const MAX_JSON_DEPTH = 32
const MAX_JSON_ITEMS = 10_000
const MAX_FORM_FIELDS = 100

/** What is wrong with a body's shape, if anything. */
export type ShapeIssue = 'too_deep' | 'too_many_items' | 'too_many_fields'

/** What a refused body is told: the limit, and what to send instead. */
export function shapeMessage(issue: ShapeIssue): string {
  switch (issue) {
    case 'too_deep': return `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, the limit of this service's JSON bodies; send a flatter body (no operation takes more than 2 levels).`
    case 'too_many_items': return `The request body holds more than ${MAX_JSON_ITEMS} array elements and object members, the limit of this service's JSON bodies; send fewer (no operation takes more than a few dozen).`
    case 'too_many_fields': return `The form has more than ${MAX_FORM_FIELDS} fields, the limit of this service's forms; send only the form's own fields.`
  }
}

/**
 * The shape of a JSON text, without parsing it: its nesting depth and its items (the brackets and
 * commas outside strings, which are at least the elements and members). Linear in the text: a string
 * is skipped with indexOf to its closing quote. Not a validity check: text that is not JSON passes
 * here and JSON.parse refuses it.
 *
 * Written here rather than taken from a library: the kept JSON libraries either parse the whole text
 * in JavaScript (@streamparser/json, at a fraction of JSON.parse's speed on a 16 MB note, and with no
 * depth or count limit) or guard against prototype poisoning only (secure-json-parse, bourne).
 */
export function jsonShapeIssue(text: string): ShapeIssue | null {
  let depth = 0
  let items = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      i = closingQuote(text, i)
      if (i === -1) return null
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return 'too_deep'
      if (++items > MAX_JSON_ITEMS) return 'too_many_items'
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    } else if (c === 0x2c) {
      if (++items > MAX_JSON_ITEMS) return 'too_many_items'
    }
  }
  return null
}

/** The index of the quote that closes the string opened at `open`, or -1 when none does. */
function closingQuote(text: string, open: number): number {
  let j = open
  for (;;) {
    j = text.indexOf('"', j + 1)
    if (j === -1) return -1
    // escaped when preceded by an odd number of backslashes (each run is scanned once)
    let backslashes = 0
    while (text.charCodeAt(j - 1 - backslashes) === 0x5c) backslashes++
    if (backslashes % 2 === 0) return j
  }
}

/** The fields of an `application/x-www-form-urlencoded` text, counted before URLSearchParams reads them. */
export function formShapeIssue(text: string): ShapeIssue | null {
  let fields = 1
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    if (++fields > MAX_FORM_FIELDS) return 'too_many_fields'
  }
  return null
}

/** The parts of a `multipart/form-data` body, counted by their delimiter before it is parsed. */
export function multipartShapeIssue(bytes: Uint8Array, boundary: string): ShapeIssue | null {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const delimiter = `--${boundary}`
  let parts = 0
  for (let i = body.indexOf(delimiter); i !== -1; i = body.indexOf(delimiter, i + delimiter.length)) {
    // the last delimiter closes the body rather than opening a part
    if (++parts > MAX_FORM_FIELDS + 1) return 'too_many_fields'
  }
  return null
}
