import { safeEqual } from '../../crypto/digest'

/**
 * A right passphrase is proven by a short-lived signed value in the page's URL (`?k=`), not a cookie
 * (the page sets none) nor a form post per view (the player's byte-range requests are GETs the
 * browser makes itself): `<expiry in epoch seconds>.<HMAC-SHA256 of the link's id and expiry>`. The
 * page's links (player, downloads) carry it; Referrer-Policy no-referrer keeps it, like the token,
 * from other sites.
 */
export const PROOF_SECONDS = 30 * 60

const mac = (key: string, shareId: string, expires: number) =>
  new Bun.CryptoHasher('sha256', key).update(`share-passphrase\0${shareId}\0${expires}`).digest('base64url')

export function passphraseProof(key: string, shareId: string, expires: number): string {
  return `${expires}.${mac(key, shareId, expires)}`
}

export function proofHolds(key: string, shareId: string, proof: string, nowSeconds: number): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(proof)
  if (!m) return false
  const expires = Number(m[1])
  return expires > nowSeconds && safeEqual(m[2]!, mac(key, shareId, expires))
}
