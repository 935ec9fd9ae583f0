import { createServer, type Server } from 'node:http'
import Provider from 'oidc-provider'
import { freePort } from './process'

/** A person at the loopback provider: the devInteractions login name is the key of `people`. */
export interface ProviderPerson {
  email?: string
  email_verified?: boolean
  name?: string
  groups?: string[]
}

/**
 * A real OpenID Connect provider on loopback: panva's `oidc-provider` (an implementation independent
 * of notesvc's own code), with its development login and consent pages (any password is accepted for
 * a login name in `people`), one confidential client registered for `redirectUris`, and the scopes
 * openid, email, profile and groups. `people` may be changed while it runs.
 */
export async function startOidcProvider(o: { redirectUris: string[]; clientId: string; clientSecret: string; people: Record<string, ProviderPerson>; host?: string }) {
  const port = await freePort()
  const issuer = `http://${o.host ?? 'localhost'}:${port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: o.clientId,
      client_secret: o.clientSecret,
      redirect_uris: o.redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const person = o.people[id]
      if (!person) return undefined
      return { accountId: id, claims: async () => ({ sub: id, ...person }) }
    },
  })
  provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err))
  const server: Server = createServer(provider.callback())
  await new Promise<void>(resolve => server.listen(port, o.host === '127.0.0.1' ? '127.0.0.1' : 'localhost', resolve))
  return {
    issuer,
    provider,
    async stop() {
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
