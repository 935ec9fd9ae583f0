import { Elysia } from 'elysia'
import type { Admission, AdmissionTerms, Admitted, Principal } from './admission'
import { clientAddress, type PeerServer } from './client-address'
import { requestOrigin, type Caller, type CallOrigin } from './caller'
import { ApiError } from './errors'
import { formatBytes, MAX_JSON_BODY_BYTES } from './body-limit'
import { UNPARSEABLE_BODY, type Unparseable } from './json-body'
import { shapeMessage } from './body-shape'
import { refuseUnstorableText } from './text-check'
import { labelRequest } from './request-label'
import { errorScenarioFires, SCENARIO_HEADER, scenarioError, scenarioOfHeader, type SandboxScenario } from './sandbox-scenarios'


/**
 * The credential of an `Authorization: Bearer <token>` header (the scheme is case-insensitive, RFC 7235).
 * Only the header is read: a token in the query string (RFC 6750 section 2.3) ends up in access logs
 * and browser history, so it is not accepted. (This replaces @elysiajs/bearer, which also reads the
 * query string and costs a second per-request hook.)
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || header.length < 8 || header.charCodeAt(6) !== 32) return undefined
  // the usual spelling at once; any other case of the scheme lower-cased (a new string) to compare
  if (!header.startsWith('Bearer') && header.slice(0, 6).toLowerCase() !== 'bearer') return undefined
  const token = header.slice(7).trim()
  return token === '' ? undefined : token
}

/**
 * What the guard adds to a request's context: the admitted principal, the operation, what the rate
 * limit read alongside, and for an operation the caller its handler is given.
 */
type Guarded = Admitted & { operation: AdmissionTerms | null; caller?: Caller<Principal | null> }

/**
 * A request admitted to an operation, as the guard puts it in the request's context: the principal,
 * the operation and what was read alongside, and `caller`, the object the operation's handler is
 * given (http/operation-routes.ts), which is this one: so a request to an operation costs one object
 * here, not two. Its origin is read only when asked (the audit log).
 */
class AdmittedCall implements Caller<Principal | null> {
  readonly caller: Caller<Principal | null> = this
  readonly principal: Principal | null
  readonly alongside: string | undefined
  readonly operation: AdmissionTerms
  readonly #request: Request
  readonly #server: (() => PeerServer) | undefined

  constructor(admitted: Admitted, terms: AdmissionTerms, request: Request, server: (() => PeerServer) | undefined) {
    this.principal = admitted.principal
    this.alongside = admitted.alongside
    this.operation = terms
    this.#request = request
    this.#server = server
  }

  origin(): CallOrigin {
    return requestOrigin(this.#server?.(), this.#request)
  }

  ifMatch(): string | null {
    return this.#request.headers.get('if-match')
  }

  scenario(): SandboxScenario | null {
    return this.principal?.sandbox ? scenarioOfHeader(this.#request.headers.get(SCENARIO_HEADER)) : null
  }
}

/**
 * A signed-in browser session as a credential (the web library's calls to the API): the principal of
 * the request's session cookie when the request carries the session's CSRF token in a header, null
 * when it does not try to be one. Throws 401 when it tries and fails (expired session, wrong token).
 */
export type SessionCredential = (request: Request) => Promise<Principal | null>

/**
 * An admitted request whose JSON body could not be parsed (too large, empty, not JSON, or nested or
 * numerous past the limits of http/body-shape.ts) is refused now, with what to send instead; then
 * one whose path parameters or body hold text the database cannot hold (U+0000, a lone surrogate:
 * src/http/text-check.ts), naming each field, whatever the back end. (Query parameters are checked
 * with the rest of the query, by `queryValidator`; the body against its schema after the path, by
 * the route's own check, contract.ts `routeOptions`.) Last, a sandbox key's `Notesvc-Scenario` header
 * naming an error the operation declares is answered with that error (http/sandbox-scenarios.ts).
 */
function refuseUnfitInput(admitted: Admitted, terms: AdmissionTerms, params: unknown, body: unknown, request: Request, server: (() => PeerServer) | undefined): Guarded {
  const unparseable = admitted.principal && typeof body === 'object' && body !== null ? (body as Record<symbol, Unparseable>)[UNPARSEABLE_BODY] : undefined
  if (unparseable === 'too_large') {
    throw new ApiError('payload_too_large', `The request body is larger than ${formatBytes(MAX_JSON_BODY_BYTES)}, the limit of JSON requests; send recordings as uploads (POST /v1/uploads).`)
  }
  if (unparseable === 'empty') throw new ApiError('invalid_request', `${terms.id} needs a JSON body; send one with \`Content-Type: application/json\`.`)
  if (unparseable === 'invalid') throw new ApiError('invalid_request', 'The request body is not valid JSON; check quotes and commas, and send it with `Content-Type: application/json`.')
  if (unparseable) throw new ApiError('invalid_request', shapeMessage(unparseable))
  if (admitted.principal) {
    refuseUnstorableText('params', params)
    refuseUnstorableText('body', body)
  }
  const call = new AdmittedCall(admitted, terms, request, server)
  const scenario = call.scenario()
  if (scenario && errorScenarioFires(scenario, terms)) throw scenarioError(scenario)
  return call
}

/**
 * The HTTP guard: every operation of the table goes through admission (credential, rate limit with
 * X-RateLimit-* headers, scope) before body validation, so a request without a credential is told so,
 * not told its body is wrong.
 */
export function authGuard(admission: Admission, opts: { session?: SessionCredential; server?: () => PeerServer } = {}) {
  // Runs for every request (global): Elysia prepares for it what it names. Not `headers`, which made
  // every request copy all its headers into an object, nor `server`, which made every request define
  // a getter on its context: the one header is read off the request, the server asked for only when a
  // client address is (opts.server; the app's, as Elysia would give).
  return new Elysia({ name: 'notesvc-auth' })
    .derive({ as: 'global' }, async ({ request, route, set, params, body }): Promise<Guarded> => {
      const terms = admission.termsForRoute(request.method === 'HEAD' ? 'GET' : request.method, route)
      labelRequest(request, terms ? terms.id : route)
      if (!terms) {
        // pages, OAuth, uploads' PUT: their forms and queries are read by their handlers, their path here
        refuseUnstorableText('params', params)
        return { principal: null, alongside: undefined, operation: null }
      }
      const credential = bearerToken(request.headers.get('authorization') ?? undefined)
      // a cached key counted in memory (SQLite): admitted at once, no turn through promises
      const known = admission.admitNow(credential, terms, set.headers)
      if (known) return refuseUnfitInput(known, terms, params, body, request, opts.server)
      if (!credential && !terms.public && opts.session) {
        const viaSession = await opts.session(request)
        if (viaSession) return refuseUnfitInput(await admission.authorize(viaSession, terms, set.headers), terms, params, body, request, opts.server)
      }
      const admitted = await admission.admit({ credential, address: () => clientAddress(opts.server?.(), request) }, terms, { rateHeaders: set.headers })
      return refuseUnfitInput(admitted, terms, params, body, request, opts.server)
    })
}
