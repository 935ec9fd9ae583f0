/**
 * The headers every answer carries unless it says otherwise (set by the error handler for every
 * request, http/error-handler.ts; by the answers made outside Elysia: the kept first page, an escaped
 * error). `nosniff`, so a browser never reads an answer as another type than it says (a JSON body, a
 * transcript or a recording run as a page or a script); `no-store`, so no cache (a browser's, a
 * proxy's) keeps transcripts, keys and usage, which are private. An answer meant to be kept (the
 * pages' stylesheets and scripts, the docs page's script, OAuth's metadata) and the media routes set
 * their own Cache-Control, which wins (Elysia keeps a Response's own headers).
 */
export const ANSWER_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const

/**
 * The headers of an HTML page: never cached, framed (clickjacking) or sniffed, no referrer to other
 * sites, and the page's Content-Security-Policy.
 */
export function pageHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    ...ANSWER_HEADERS,
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'content-security-policy': contentSecurityPolicy,
  }
}
