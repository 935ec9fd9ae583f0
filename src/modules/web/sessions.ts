import type { WebRepo } from './repo'
import type { Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import { randomToken } from '../../http/html'

export const SESSION_COOKIE = 'notesvc_session'
export const SIGN_IN_PATH = '/signin'
/** Sessions last a week from sign-in. */
const SESSION_TTL_MS = 7 * 24 * 3600 * 1000

export interface SessionUser {
  accountId: string
  email: string
  /** the session's CSRF token: every form posted by a signed-in user must carry it */
  csrf: string
}


/** The value of one cookie in a Cookie header. */
export function cookieValue(header: string | null | undefined, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return decodeURIComponent(v.join('='))
  }
  return null
}

export type SessionService = ReturnType<typeof createSessionService>

/**
 * Browser sessions for the sign-in, settings and consent pages. The cookie holds 256 random bits;
 * the database keeps only its SHA-256. Cookies are HttpOnly, SameSite=Lax, Path=/, and Secure when
 * the public URL is https.
 */
export function createSessionService(deps: { repo: WebRepo; clock: Clock; secureCookies: boolean; emailOf: (accountId: string) => Promise<string | null> }) {
  const { repo, clock } = deps

  function cookie(value: string, maxAgeSeconds: number): string {
    return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeSeconds}${deps.secureCookies ? '; Secure' : ''}`
  }

  return {
    /** Starts a session; returns the Set-Cookie header value. */
    async create(accountId: string): Promise<{ setCookie: string; csrf: string }> {
      const value = randomToken()
      const csrf = randomToken()
      const now = clock.now()
      await repo.removeSessionsExpiredBy(now.toISOString())
      await repo.insertSession({ idHash: sha256(value), accountId, csrf, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + SESSION_TTL_MS).toISOString() })
      return { setCookie: cookie(value, SESSION_TTL_MS / 1000), csrf }
    },

    /** The signed-in user of a request, or null. */
    async userOf(request: Request): Promise<SessionUser | null> {
      const value = cookieValue(request.headers.get('cookie'), SESSION_COOKIE)
      if (!value) return null
      const row = await repo.session(sha256(value))
      if (!row || row.expires_at <= clock.now().toISOString()) return null
      const email = await deps.emailOf(row.account_id)
      if (email === null) return null
      return { accountId: row.account_id, email, csrf: row.csrf_token }
    },

    /** Ends the request's session; returns the Set-Cookie header value that clears the cookie. */
    async destroy(request: Request): Promise<string> {
      const value = cookieValue(request.headers.get('cookie'), SESSION_COOKIE)
      if (value) await repo.removeSession(sha256(value))
      return cookie('', 0)
    },
  }
}
