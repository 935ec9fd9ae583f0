import type { Principal } from '../../http/admission'
import type { SessionCredential } from '../../http/auth'
import { ApiError } from '../../http/errors'
import { ALL_SCOPES } from '../../http/contract'
import { fromOwnOrigin } from '../../http/origin'
import { safeEqual, sha256 } from '../../crypto/digest'
import { cookieValue, SESSION_COOKIE, SIGN_IN_PATH, type SessionService } from './sessions'

/** The header the web library sends its session's CSRF token in. */
const CSRF_HEADER = 'x-csrf-token'
/** The header that picks the library: `sandbox` for the sandbox library, anything else the live one. */
const LIBRARY_HEADER = 'x-notesvc-library'

/**
 * The signed-in session of a request that carries the session's CSRF token (`token`), as the principal
 * it acts as in the library `sandbox` picks; throws 401 when the request came from another site, the
 * session has ended or the token is not the session's. Shared by the API calls below and the browser's
 * live stream (modules/live/browser-credential.ts), which sends the token as a WebSocket subprotocol.
 */
export function sessionPrincipal(sessions: SessionService, publicUrl: string) {
  return async (request: Request, token: string, sandbox: boolean): Promise<Principal> => {
    const refuse = (why: string) => new ApiError('invalid_token', `${why} Sign in again at ${SIGN_IN_PATH} (or send an API key as \`Authorization: Bearer <key>\`).`)
    if (!fromOwnOrigin(request, publicUrl)) throw refuse('This request came from another site, so the browser session was not used.')
    const user = await sessions.userOf(request)
    if (!user) throw refuse('Your browser session has ended.')
    if (!safeEqual(token, user.csrf)) throw refuse('The page\'s security token does not match your session; reload the page.')
    const cookie = cookieValue(request.headers.get('cookie'), SESSION_COOKIE) ?? ''
    return {
      accountId: user.accountId,
      sandbox,
      scopes: new Set(ALL_SCOPES),
      credentialId: `ses_${sha256(cookie).slice(0, 24)}`,
      // The interface names three sources; a signed-in session counts like the ID tokens of a session.
      source: 'oauth',
    }
  }
}

/**
 * The signed-in browser as an API credential (docs/decisions.md "The web library"): a request to a
 * /v1 operation without `Authorization` but with the session cookie AND the session's CSRF token in
 * `X-CSRF-Token` acts as the session's account, with every scope, in the library `X-Notesvc-Library`
 * names. A custom header cannot be sent by another site without a CORS preflight this server never
 * grants, and the cookie is SameSite=Lax, so only the library's own pages can call this way; the Origin
 * check is the same second line of defence as the forms'. Rate limits count per session.
 */
export function sessionCredential(sessions: SessionService, publicUrl: string): SessionCredential {
  const principalOf = sessionPrincipal(sessions, publicUrl)
  return async (request: Request): Promise<Principal | null> => {
    const token = request.headers.get(CSRF_HEADER)
    if (token === null) return null
    return principalOf(request, token, request.headers.get(LIBRARY_HEADER) === 'sandbox')
  }
}
