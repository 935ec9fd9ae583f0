
/**
 * SHA-256 of a string as lowercase hex: how API keys, OAuth tokens, codes and client secrets, session
 * ids and sign-in throttling keys are stored and looked up, so the secret itself is never kept.
 */
export function sha256(s: string): string {
  return Bun.SHA256.hash(s, 'hex') as string
}

/** SHA-256 of a string as base64url: PKCE's S256 code challenge (RFC 7636). */
export function sha256Base64url(s: string): string {
  return Buffer.from(Bun.SHA256.hash(s) as Uint8Array).toString('base64url')
}

/**
 * Constant-time equality of two strings. Their SHA-256 digests are compared, which always have the
 * same length, so timing reveals neither where they differ nor whether their lengths do.
 */
export function safeEqual(a: string, b: string): boolean {
  return crypto.timingSafeEqual(new Uint8Array(Bun.SHA256.hash(a) as Uint8Array), new Uint8Array(Bun.SHA256.hash(b) as Uint8Array))
}
