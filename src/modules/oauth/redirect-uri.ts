/** Longest redirect URI accepted at registration. */
const MAX_URI_LENGTH = 2000

/**
 * A host name of letters, digits, hyphens and underscores (found on private networks) in dot-separated
 * labels, with an optional trailing dot; or an IPv4 or bracketed IPv6 address.
 */
const HOST = /^(?:(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(?:\.(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?))*\.?|\[[0-9a-f:.]+\])$/

/**
 * An exact, absolute URI with a host (OAuth 2.1 and RFC 8252 compare redirect URIs as exact strings):
 * https, or http on a loopback host (RFC 8252 section 7.3); never a wildcard, a fragment or credentials.
 * The loopback hosts are the three exact names RFC 8252 gives native apps; this is not the SSRF address
 * policy of net/address-policy.ts (the server never connects to a redirect URI, the browser does).
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri === '') return 'a redirect URI must be a non-empty string'
  if (uri.length > MAX_URI_LENGTH) return `a redirect URI must be at most ${MAX_URI_LENGTH} characters`
  // WHATWG URL parsing repairs "https:cb" into "https://cb/"; the URI as sent must already be absolute.
  if (!/^https?:\/\/[^/?#]/i.test(uri)) return `${uri} is not an absolute https (or loopback http) URI with a host`
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `${uri} is not an absolute URL`
  }
  if (uri.includes('*')) return `${uri} has a wildcard; register each redirect URI exactly`
  if (uri.includes('#')) return `${uri} has a fragment; redirect URIs must not`
  if (url.username || url.password) return `${uri} has credentials in it`
  if (!HOST.test(url.hostname)) return `${uri} does not name a valid host`
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return null
  return `${uri} must use https (http is allowed only for 127.0.0.1, [::1] and localhost)`
}
