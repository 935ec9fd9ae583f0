/**
 * The second line of defence of every state-changing form, behind its CSRF token: when the browser
 * says where the form came from (`Origin`), it must be this site. "This site" is the public URL
 * (NOTESVC_PUBLIC_URL), or the host the request itself was sent to (`Host`): a browser always sends
 * the host it is talking to, so a page on another site posting here has an Origin whose host differs,
 * while a user who opened the server by another name (localhost instead of 127.0.0.1, a LAN address,
 * a proxy without NOTESVC_PUBLIC_URL) is not locked out. `Origin: null` (sandboxed frames, some
 * redirects, file pages) is refused. Requests without the header (older browsers, non-browser
 * clients) rely on the token alone.
 */
export function fromOwnOrigin(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get('origin')
  if (origin === null) return true
  if (origin === new URL(publicUrl).origin) return true
  let host: string
  try {
    host = new URL(origin).host
  } catch {
    return false // "null" and anything else that is not an origin
  }
  const requestHost = request.headers.get('host')
  return requestHost !== null && host === requestHost.toLowerCase()
}
