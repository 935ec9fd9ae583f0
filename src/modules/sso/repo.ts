import type { Store } from '../../db/store'

export interface SsoIdentityRow {
  issuer: string
  subject: string
  account_id: string
  email: string | null
  created_at: string
  last_signin_at: string
}

export type SsoRepo = ReturnType<typeof createSsoRepo>

/** The sso module's table: accounts linked to a person at the identity provider (migration 18). */
export function createSsoRepo(store: Store) {
  return {
    transaction: <T>(fn: () => Promise<T>) => store.transaction(fn),
    identity: (issuer: string, subject: string) =>
      store.get<SsoIdentityRow>('SELECT * FROM sso_identities WHERE issuer = ? AND subject = ?', [issuer, subject]),
    identityOfAccount: (accountId: string, issuer: string) =>
      store.get<SsoIdentityRow>('SELECT * FROM sso_identities WHERE account_id = ? AND issuer = ?', [accountId, issuer]),
    /** false when the subject, or the account at this issuer, is linked already (another node a moment ago) */
    link: async (r: SsoIdentityRow) =>
      (await store.run('INSERT INTO sso_identities (issuer, subject, account_id, email, created_at, last_signin_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
        [r.issuer, r.subject, r.account_id, r.email, r.created_at, r.last_signin_at])) > 0,
    touch: async (issuer: string, subject: string, email: string | null, at: string) => {
      await store.run('UPDATE sso_identities SET email = ?, last_signin_at = ? WHERE issuer = ? AND subject = ?', [email, at, issuer, subject])
    },
  }
}
