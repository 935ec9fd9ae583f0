import { pageHeaders } from './security-headers'

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
 * cached, framed or sniffed (http/security-headers.ts), and a content security policy that takes
 * styles only from this server's stylesheets (no inline style element or attribute) and runs only the
 * scripts carrying `nonce` (none without one).
 */
export function pageResponse(body: string, o: { status?: number; headers?: Record<string, string>; cookies?: string[]; nonce?: string } = {}): Response {
  const headers = new Headers({
    ...pageHeaders(`default-src 'none'; style-src 'self'; script-src ${o.nonce ? `'nonce-${o.nonce}'` : "'none'"}; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`),
    ...o.headers,
  })
  for (const c of o.cookies ?? []) headers.append('set-cookie', c)
  return new Response(body, { status: o.status ?? 200, headers })
}

/** A stylesheet or script embedded in the binary: versioned URLs never change; any other (an old or no version) is checked each time. */
export function assetResponse(body: string, type: string, current: boolean): Response {
  return new Response(body, {
    headers: { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': current ? 'public, max-age=31536000, immutable' : 'no-cache' },
  })
}

/** An embedded stylesheet served at `path`: the versioned URL a page links, and the route's answer for the `v` it is asked with. */
export function stylesheet(path: string, css: string): { path: string; href: string; answer: (v: unknown) => Response } {
  const version = Bun.hash(css).toString(36)
  return { path, href: `${path}?v=${version}`, answer: v => assetResponse(css, 'text/css; charset=utf-8', v === version) }
}
