import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose'

/**
 * A loopback OpenID Connect issuer of ID tokens: its discovery document and JWKS on a real HTTP
 * server, and `sign` to make an ID token of it for a test (the bearer path of src/modules/oidc checks
 * the signature, issuer, audience and expiry against it as against any provider). For the browser
 * flow, use the full provider of ./oidc-provider.ts.
 */
export async function startIdTokenIssuer(o: { clientId: string }) {
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const key: CryptoKey = privateKey
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] }
  let issuer = ''
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/.well-known/openid-configuration') return Response.json({ issuer, jwks_uri: `${issuer}/jwks` })
      if (path === '/jwks') return Response.json(jwks)
      return new Response('not found', { status: 404 })
    },
  })
  issuer = `http://127.0.0.1:${server.port}`
  return {
    issuer,
    /** An ID token for `sub` with these claims (email, email_verified, groups, …), valid ten minutes. */
    sign: (sub: string, claims: Record<string, unknown> = {}) => new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'JWT' })
      .setIssuer(issuer).setAudience(o.clientId).setSubject(sub).setIssuedAt().setExpirationTime('10m')
      .sign(key),
    stop: () => server.stop(true),
  }
}
