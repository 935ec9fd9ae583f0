import { ApiError, validationMessage, type ErrorDetail } from './errors'

/**
 * Text the database can hold as sent. PostgreSQL's `text` refuses U+0000 in a UTF-8 database
 * (`invalid byte sequence for encoding "UTF8": 0x00`, which was a 500), while SQLite stores it; and a
 * lone surrogate (a `\uD800`–`\uDFFF` escape in JSON with no partner) is no Unicode character at
 * all: both drivers write UTF-8, in which it cannot be encoded, so either would store something other
 * than what was sent. Both are refused with 400 before anything is read or written, the same on
 * every back end (docs/decisions.md, "Requests").
 */
function textIssue(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000)'
  if (!s.isWellFormed()) return 'must not contain a lone surrogate (an unpaired \\uD800-\\uDFFF escape)'
  return null
}

/**
 * One detail per string at fault in `value`, keys included, named by its path as the validator names
 * fields (`title`, `events.0`; `part` for a bare string). Walked with a stack of its own, so a deeply
 * nested body cannot exhaust the call stack.
 */
export function textDetails(value: unknown, part: string): ErrorDetail[] {
  const details: ErrorDetail[] = []
  // [value, its path, its key when it is an object's member]; children pushed last first, so taken in order
  const stack: [unknown, string, string | null][] = [[value, '', null]]
  while (stack.length > 0) {
    const [v, path, key] = stack.pop()!
    const keyIssue = key === null ? null : textIssue(key)
    if (keyIssue) details.push({ field: path, issue: `its name ${keyIssue}` })
    if (typeof v === 'string') {
      const issue = textIssue(v)
      if (issue) details.push({ field: path === '' ? part : path, issue })
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!
        stack.push([child, path === '' ? k : `${path}.${k}`, Array.isArray(v) ? null : k])
      }
    }
  }
  return details
}

/**
 * Refuses a request part (`params`, `query`, `body`) holding text the database cannot hold: 400
 * `invalid_request` naming each field, as a validation failure is.
 */
export function refuseUnstorableText(part: 'params' | 'query' | 'body', value: unknown): void {
  const details = textDetails(value, part)
  if (details.length) throw new ApiError('invalid_request', validationMessage(part, details), { details })
}

/** One detail per form field at fault, its name or its value, named by the field's name. */
export function formTextDetails(form: URLSearchParams): ErrorDetail[] {
  const details: ErrorDetail[] = []
  for (const [name, value] of form) {
    const nameIssue = textIssue(name)
    if (nameIssue) details.push({ field: name, issue: `its name ${nameIssue}` })
    const issue = textIssue(value)
    if (issue) details.push({ field: name, issue })
  }
  return details
}
