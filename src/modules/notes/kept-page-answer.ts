import { parseQueryFromURL } from 'elysia/parse-query'
import { rateHeadersOn, type Admission, type Principal } from '../../http/admission'
import { accessLine } from '../../http/access-log'
import { bearerToken } from '../../http/auth'
import { labelRequest } from '../../http/request-label'
import { SCENARIO_HEADER } from '../../http/sandbox-scenarios'
import { ANSWER_HEADERS } from '../../http/security-headers'
import { queryReader } from '../../http/contract'
import { arrayQueryParams } from '../../http/schemas'
import { atOneWalIndexRead } from '../../db/wal-index'
import type { Logger } from '../../log'
import { listNotes } from './contract'
import type { ListNotesQuery } from './model'
import type { NotesService } from './service'

const listQuery = queryReader(listNotes)
/** listNotes' repeated parameters (tag) */
const listArrays = arrayQueryParams(listNotes.query)
/** query strings remembered per principal (see pageKeys) */
const MAX_QUERIES_PER_PRINCIPAL = 64

/**
 * GET /v1/notes answered before the application routes it (`answerAtOnce` of http/listen.ts),
 * synchronously, when everything the route needs is in memory: a key the key cache holds (with the
 * scope), a query that reads, a page kept under the notes' current stamp (sent from its bytes, kept
 * with it), and a rate limit counted in memory that allows it. The answer is the route's own: the same
 * status, body and headers (request id, the security headers, X-RateLimit-*, content type) and the same count, plus the
 * NOTESVC_ACCESS_LOG line and the metrics' label (GET /metrics). Anything else (no credential, an unknown or uncached key, a missing scope,
 * a query to refuse, no kept page, a 429, HEAD, '/v1/notes/', a search, and PostgreSQL, where the
 * counter is read with the rate limit) is left to the route, which answers it as always, errors
 * included; nothing is counted before the answer is certain.
 *
 * Why: the repeated first page is what a client polling a library sends most. With the page, the key
 * and the count all in memory, going through Elysia around them (its context, the guard's derive and
 * the handler, each an async step, the response a promise, built from the context's headers) was
 * about an eighth of the request's CPU (bench/README.md, "The repeated first page"). The route stays
 * the reference: a test checks that both give the same answer
 * (test/modules/notes/kept-page-answer.test.ts).
 */
export function keptListAnswer(deps: {
  admission: Admission
  notes: NotesService
  newRequestId: () => string
  /** the access log (NOTESVC_ACCESS_LOG): one line per answer, as documented for every request */
  accessLog?: Logger
}): (request: Request) => Response | undefined {
  const { admission, notes, newRequestId, accessLog } = deps
  // One Headers object, set afresh for each answer and copied by the Response made from it (the
  // Fetch standard's Response constructor copies its init's headers; nothing is awaited in between):
  // on Bun, a Response made from a record of five headers cost about 2 µs more than from a Headers.
  const headers = new Headers([['x-request-id', ''], ...Object.entries(ANSWER_HEADERS), ['x-ratelimit-limit', ''], ['x-ratelimit-remaining', ''], ['x-ratelimit-reset', ''], ['content-type', 'application/json; charset=utf-8']])
  const setRateHeaders = rateHeadersOn(headers)
  // Each principal's query strings and the keys of their pages. A principal is the key cache's object
  // for a key, the same from request to request until a commit empties the cache; its entries go with
  // it. (Parsing and checking the query and building the key was about a tenth of an early answer.)
  const pageKeys = new WeakMap<Principal, Map<string, string>>()
  // On SQLite, the key's stamp and the page's told by one read of the WAL index, not one each
  return atOneWalIndexRead((request: Request): Response | undefined => {
    if (request.method !== 'GET') return undefined
    const started = accessLog ? performance.now() : 0
    // the path as Elysia reads it (after the origin, before the query); '/v1/notes/' is left to it
    const url = request.url
    const start = url.indexOf('/', 11)
    const qi = url.indexOf('?', start + 1)
    if ((qi === -1 ? url.length : qi) - start !== 9 || !url.startsWith('/v1/notes', start)) return undefined
    const principal = admission.knownPrincipal(bearerToken(request.headers.get('authorization') ?? undefined), listNotes)
    if (!principal) return undefined
    // a sandbox scenario named by header: the route's guard answers it (http/sandbox-scenarios.ts)
    if (principal.sandbox && request.headers.has(SCENARIO_HEADER)) return undefined
    // the query read, checked and turned into its page's key once per principal and query string
    const raw = qi === -1 ? '' : url.slice(qi + 1)
    let keys = pageKeys.get(principal)
    if (keys === undefined) pageKeys.set(principal, (keys = new Map()))
    let key = keys.get(raw)
    if (key === undefined) {
      try {
        const q: ListNotesQuery = listQuery(qi === -1 ? Object.create(null) : parseQueryFromURL(url, qi + 1, listArrays))
        key = notes.listPageKey(principal, q)
      } catch {
        // a query to refuse (a bound, `speaker` without `q`): the route answers it, inside the error handler
        return undefined
      }
      if (key === undefined) return undefined // a search
      if (keys.size >= MAX_QUERIES_PER_PRINCIPAL) keys.clear()
      keys.set(raw, key)
    }
    const page = notes.keptListBodyAt(key)
    if (page === undefined) return undefined
    const counted = admission.countNow(principal, listNotes)
    if (!counted) return undefined // the route answers 429
    setRateHeaders(counted)
    const requestId = newRequestId()
    headers.set('x-request-id', requestId)
    accessLog?.info('request', accessLine('GET', '/v1/notes', 200, started, requestId, principal))
    labelRequest(request, 'listNotes') // the metrics (http/listen.ts observe)
    return new Response(page, { headers })
  })
}
