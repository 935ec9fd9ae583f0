/**
 * The second line of defence of every state-changing form, behind its CSRF token: when the browser
 * says where the form came from (`Origin`), it must be this service's public origin. `Origin: null`
 * (sandboxed frames, some redirects, file pages) is refused too. Requests without the header (older
 * browsers, non-browser clients) rely on the token alone.
 */
export function fromOwnOrigin(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get('origin')
  if (origin === null) return true
  return origin === new URL(publicUrl).origin
}
