import type { Scope } from '../../http/contract'
import type { ClientRow } from './repo'

/** Codes are good for this long, once. */
export const CODE_TTL_MS = 5 * 60 * 1000
export const ACCESS_TOKEN_TTL_S = 3600
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600
export const ACCESS_PREFIX = 'oat_'
export const REFRESH_PREFIX = 'ort_'

/**
 * A failure of an OAuth endpoint, answered as the OAuth error JSON (RFC 6749 section 5.2), never as the
 * API's envelope. 401 invalid_client carries a WWW-Authenticate challenge.
 */
export class OAuthError extends Error {
  constructor(readonly error: string, readonly description: string, readonly status = 400, readonly headers: Record<string, string> = {}) {
    super(description)
  }
}

export const invalidClient = (why: string) => new OAuthError('invalid_client', why, 401, { 'www-authenticate': 'Basic realm="notesvc", charset="UTF-8"' })

export const randomSecret = (bytes = 32) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url')

export function parseScope(value: string | null | undefined): string[] {
  return (value ?? '').split(' ').filter(Boolean)
}

export interface AuthorizationRequest {
  client: ClientRow
  redirectUri: string
  scopes: Scope[]
  state: string | null
  codeChallenge: string
  resource: string | null
}

export type AuthorizationCheck =
  | { kind: 'ok'; request: AuthorizationRequest }
  /** the client or redirect URI cannot be trusted: show the error, never redirect */
  | { kind: 'page'; message: string }
  /** the redirect URI is registered: send the error there */
  | { kind: 'redirect'; location: string }

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

/** The clock as the flows use it: now, or `ms` from now, as an ISO timestamp. */
export type IsoClock = (ms?: number) => string

/** A workspace the person may let the application act in: their personal one first, then their teams. */
export interface ConsentWorkspace {
  id: string
  /** "Personal" for the person's own */
  name: string
  role: string
}
