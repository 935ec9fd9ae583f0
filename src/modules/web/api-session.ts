import type { Principal } from '../../http/admission'
import type { Role } from '../workspaces/model'
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
/** The header that picks the workspace (its id); absent: the person's personal workspace. */
const WORKSPACE_HEADER = 'x-notesvc-workspace'

/** a person's role in a workspace, null when not a member (WorkspacesRepo.roleOf) */
export type RoleLookup = (workspaceId: string, accountId: string) => Promise<Role | null>
/** records a member's last activity in a team workspace (WorkspacesRepo.touchMember) */
export type MemberTouch = (workspaceId: string, accountId: string, at: string) => Promise<void>
/** a member's last activity is written at most this often per member and node */
const TOUCH_INTERVAL_MS = 60_000

/**
 * The signed-in session of a request that carries the session's CSRF token (`token`), as the principal
 * it acts as in the library `sandbox` picks, in `workspace` (else the one X-Notesvc-Workspace names, else
 * the person's own); throws 401 when the request came from another site, the
 * session has ended or the token is not the session's. Shared by the API calls below and the browser's
 * live stream (modules/live/browser-credential.ts), which sends the token as a WebSocket subprotocol.
 */
export function sessionPrincipal(sessions: SessionService, publicUrl: string, roleOf: RoleLookup, touch?: MemberTouch, millis: () => number = Date.now) {
  const lastTouched = new Map<string, number>()
  return async (request: Request, token: string, sandbox: boolean, workspace?: string): Promise<Principal> => {
    const refuse = (why: string) => new ApiError('invalid_token', `${why} Sign in again at ${SIGN_IN_PATH} (or send an API key as \`Authorization: Bearer <key>\`).`)
    if (!fromOwnOrigin(request, publicUrl)) throw refuse('This request came from another site, so the browser session was not used.')
    const user = await sessions.userOf(request)
    if (!user) throw refuse('Your browser session has ended.')
    if (!safeEqual(token, user.csrf)) throw refuse('The page\'s security token does not match your session; reload the page.')
    const cookie = cookieValue(request.headers.get('cookie'), SESSION_COOKIE) ?? ''
    // The workspace is asked of the database on every request, so a member removed is refused at once.
    const workspaceId = workspace ?? (request.headers.get(WORKSPACE_HEADER) || user.accountId)
    const role = await roleOf(workspaceId, user.accountId)
    if (!role) {
      throw new ApiError('insufficient_scope', `You are not a member of the workspace ${workspaceId}. Pick one of your workspaces in the library's workspace menu (or ask an admin of that workspace to invite you).`, {
        details: [{ field: 'X-Notesvc-Workspace', issue: 'not a member' }],
      })
    }
    if (touch && workspaceId !== user.accountId) {
      // a team member's last activity (the workspace page shows it), written at most once a minute
      const member = `${workspaceId} ${user.accountId}`
      const now = millis()
      if ((lastTouched.get(member) ?? 0) + TOUCH_INTERVAL_MS <= now) {
        if (lastTouched.size >= 10_000) lastTouched.clear()
        lastTouched.set(member, now)
        await touch(workspaceId, user.accountId, new Date(now).toISOString())
      }
    }
    return {
      accountId: workspaceId,
      actorId: user.accountId,
      role,
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
 * `X-CSRF-Token` acts as the session's person, with every scope and their role in the workspace
 * `X-Notesvc-Workspace` names (their personal one when absent), in the library `X-Notesvc-Library` names. A custom header cannot be sent by another site without a CORS preflight this server never
 * grants, and the cookie is SameSite=Lax, so only the library's own pages can call this way; the Origin
 * check is the same second line of defence as the forms'. Rate limits count per session.
 */
export function sessionCredential(sessions: SessionService, publicUrl: string, roleOf: RoleLookup, touch?: MemberTouch, millis?: () => number): SessionCredential {
  const principalOf = sessionPrincipal(sessions, publicUrl, roleOf, touch, millis)
  return async (request: Request): Promise<Principal | null> => {
    const token = request.headers.get(CSRF_HEADER)
    if (token === null) return null
    return principalOf(request, token, request.headers.get(LIBRARY_HEADER) === 'sandbox')
  }
}
