import type { Scope } from './scopes'

export type CredentialSource = 'api_key' | 'oauth' | 'mcp'

/** Who is calling: the account, which of its two libraries, and what the credential may do. */
export interface Principal {
  accountId: string
  sandbox: boolean
  scopes: Set<Scope>
  credentialId: string
  source: CredentialSource
}
