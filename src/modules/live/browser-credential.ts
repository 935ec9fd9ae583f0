/**
 * The signed-in browser as the credential of a live stream (docs/realtime.md "In the browser"). A
 * browser's WebSocket cannot send `Authorization` or any header of its own, only subprotocols, and its
 * cookies go with the upgrade. So the web library offers, besides `realtime`:
 *   - `notesvc-csrf.<token>`: the page's CSRF token (the session's, as in X-CSRF-Token on /v1 calls);
 *   - `notesvc-library.sandbox`: when it shows the sandbox library (else the live library);
 *   - `notesvc-workspace.<id>`: the workspace the page works in (else the person's personal one), as
 *     X-Notesvc-Workspace names it on /v1 calls, the membership and role checked the same way.
 * The stream then acts as the session's account, exactly as the library's API calls do: the session
 * cookie, the token matching it, and the Origin of this site (a page of another site, or another port
 * of this host, which a SameSite=Lax cookie does not stop, is refused). The checks themselves are the
 * web library's (modules/web/api-session.ts sessionPrincipal), handed in by the composition root.
 */
import type { Principal } from '../../http/admission'

const CSRF_PROTOCOL_PREFIX = 'notesvc-csrf.'
const SANDBOX_PROTOCOL = 'notesvc-library.sandbox'
const WORKSPACE_PROTOCOL_PREFIX = 'notesvc-workspace.'

/** The session's principal for a request carrying its CSRF token; throws 401 (ApiError) when refused. */
export type SessionCheck = (request: Request, csrfToken: string, sandbox: boolean, workspaceId?: string) => Promise<Principal>

/**
 * The principal of a browser stream, or null when the upgrade does not offer a CSRF token (then it is
 * not a browser session and the key decides). Throws the session check's 401 when it offers one that
 * does not hold.
 */
export type BrowserStreamCredential = (request: Request, protocols: string[]) => Promise<Principal | null>

export function browserStreamCredential(check: SessionCheck): BrowserStreamCredential {
  return async (request, protocols) => {
    const offered = protocols.find(p => p.startsWith(CSRF_PROTOCOL_PREFIX))
    if (offered === undefined) return null
    const workspace = protocols.find(p => p.startsWith(WORKSPACE_PROTOCOL_PREFIX))?.slice(WORKSPACE_PROTOCOL_PREFIX.length)
    return check(request, offered.slice(CSRF_PROTOCOL_PREFIX.length), protocols.includes(SANDBOX_PROTOCOL), workspace || undefined)
  }
}
