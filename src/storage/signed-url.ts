import { safeEqual } from '../crypto/digest'

/**
 * HMAC-signed upload targets on the service itself (DECISIONS.md "Uploads on disk storage"):
 * `PUT {base_url}/v1/uploads/{noteId}/file?expires=<unix seconds>&signature=<hex>`.
 */
function signUploadPath(secret: string, noteId: string, expiresUnix: number): string {
  return new Bun.CryptoHasher('sha256', secret).update(`PUT\n/v1/uploads/${noteId}/file\n${expiresUnix}`).digest('hex')
}

export function uploadUrl(baseUrl: string, secret: string, noteId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000)
  return `${baseUrl}/v1/uploads/${encodeURIComponent(noteId)}/file?expires=${expires}&signature=${signUploadPath(secret, noteId, expires)}`
}

export type SignatureCheck = 'ok' | 'expired' | 'invalid'

export function checkUploadSignature(secret: string, noteId: string, expires: string | undefined, signature: string | undefined, now: Date): SignatureCheck {
  if (!expires || !signature || !/^\d+$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid'
  if (!safeEqual(signUploadPath(secret, noteId, Number(expires)), signature)) return 'invalid'
  return Number(expires) * 1000 < now.getTime() ? 'expired' : 'ok'
}
