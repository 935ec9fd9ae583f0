/** Escapes text for HTML element content and quoted attribute values (both quote kinds). */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** 32 random bytes as base64url: session ids, CSRF tokens, nonces. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/**
 * A page's response (the sign-in, settings and library pages, single sign-on's refusals): HTML, never
 * cached, framed or sniffed, and a content security policy that runs only the scripts carrying `nonce`
 * (none without one).
 */
export function pageResponse(body: string, o: { status?: number; headers?: Record<string, string>; cookies?: string[]; nonce?: string } = {}): Response {
  const headers = new Headers({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; script-src ${o.nonce ? `'nonce-${o.nonce}'` : "'none'"}; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    ...o.headers,
  })
  for (const c of o.cookies ?? []) headers.append('set-cookie', c)
  return new Response(body, { status: o.status ?? 200, headers })
}
