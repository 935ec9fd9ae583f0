import { expect } from 'bun:test'

/**
 * `next=` values an attacker would put in a link to the sign-in page, each a way browsers, URL
 * parsers or path normalisation have been known to turn a "path" into another site: protocol-relative
 * forms, backslashes (browsers read `\` as `/`), dot segments that collapse into `//`, encoded dots and
 * slashes, tabs and newlines (browsers drop them), other schemes, look-alike Unicode slashes, NUL,
 * and a value too long to be a path. Whatever notesvc does with them (refuse, or keep them as a path on
 * this site), the Location it answers must resolve to this site.
 */
export const HOSTILE_NEXT: [kind: string, value: string][] = [
  ['protocol-relative', '//evil.example'],
  ['three slashes', '///evil.example'],
  ['slash backslash', '/\\evil.example'],
  ['two backslashes', '\\\\evil.example'],
  ['slash backslash slash', '/\\/evil.example'],
  ['dot segment then //', '/.//evil.example'],
  ['dot-dot segment then //', '/x/..//evil.example'],
  ['dot-dot above the root then //', '/..//evil.example'],
  ['two dot-dots then //', '/a/b/../..//evil.example'],
  ['encoded dot segment then //', '/%2e//evil.example'],
  ['encoded dot-dot then //', '/x/%2e%2e//evil.example'],
  ['mixed encoded dot-dot then //', '/x/.%2E//evil.example'],
  ['encoded slashes', '/%2f%2fevil.example'],
  ['encoded slashes, no leading slash', '%2f%2fevil.example'],
  ['double-encoded slashes', '/%252f%252fevil.example'],
  ['encoded backslash', '/%5cevil.example'],
  ['encoded backslashes after a slash', '/%5c%5cevil.example'],
  ['tab between slashes', '/\t/evil.example'],
  ['newline between slashes', '/\n/evil.example'],
  ['carriage return between slashes', '/\r/evil.example'],
  ['tab before //', '\t//evil.example'],
  ['space before //', ' //evil.example'],
  ['encoded tab between slashes', '/%09/evil.example'],
  ['NUL between slashes', '/\u0000/evil.example'],
  ['javascript: scheme', 'javascript:alert(1)'],
  ['javascript: scheme, mixed case', 'JaVaScRiPt:alert(document.domain)'],
  ['data: URL', 'data:text/html,<script>alert(1)</script>'],
  ['http URL', 'http://evil.example'],
  ['https URL with a path', 'https://evil.example/settings'],
  ['scheme without slashes', 'http:evil.example'],
  ['scheme with one slash', 'http:/evil.example'],
  ['scheme with backslashes', 'https:\\\\evil.example'],
  ['credentials and host', '//localhost@evil.example'],
  ['fullwidth solidus', '/\uff0fevil.example'],
  ['division and fraction slashes', '/\u2215\u2044evil.example'],
  ['line separator between slashes', '/\u2028/evil.example'],
  ['no leading slash', 'evil.example'],
  ['empty', ''],
  ['very long', `/${'a'.repeat(10_000)}`],
  ['very long, ending in //', `/${'./'.repeat(3000)}/evil.example`],
]

/** Honest `next=` values and where the browser is sent after signing in. */
export const HONEST_NEXT: [value: string, location: string][] = [
  ['/settings', '/settings'],
  ['/oauth/authorize?response_type=code&client_id=cli_1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s', '/oauth/authorize?response_type=code&client_id=cli_1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s'],
  ['/notes/note_1#t=30', '/notes/note_1#t=30'],
  ['/?q=a%20b', '/?q=a%20b'],
  ['/a/../settings', '/settings'],
]

/** Where a browser at `origin` goes when it follows `location` (WHATWG URL parsing, as browsers do). */
function followed(location: string | null, origin: string): URL {
  expect(location).not.toBeNull()
  return new URL(location!, origin)
}

/** Asserts that following `location` from `origin` stays on `origin`. */
export function expectStaysOn(location: string | null, origin: string, what: string) {
  expect({ what, origin: followed(location, origin).origin }).toEqual({ what, origin })
}

/**
 * Whether a value holds text the database cannot hold (U+0000, a lone surrogate): the pages' forms
 * and OAuth's endpoints refuse such a field with 400 before anything else (issue 29, item 10), so no
 * redirect is made at all.
 */
export function refusedAsText(value: string): boolean {
  return /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value)
}
