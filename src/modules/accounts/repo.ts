import { transactions, type Database } from '../../db/database'
import type { Plan } from '../credits/model'

export interface AccountRow {
  id: string
  email: string
  plan: Plan
  /** the balance columns: written by the credits module alone after the account is created */
  grant_period: string
  grant_used: number
  purchased_credits: number
  created_at: string
  /** the OpenID Connect subject linked to the account (migration 3); absent on rows built by hand */
  oidc_subject?: string | null
}

export interface ApiKeyRow {
  id: string
  account_id: string
  name: string | null
  start: string
  hash: string
  sandbox: number
  scopes: string
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>

export function createAccountsRepo(db: Database) {
  const q = {
    count: db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts'),
    byEmail: db.query<AccountRow, [string]>('SELECT * FROM accounts WHERE email = ?'),
    byId: db.query<AccountRow, [string]>('SELECT * FROM accounts WHERE id = ?'),
    passwordByEmail: db.query<{ id: string; password_hash: string | null }, [string]>('SELECT id, password_hash FROM accounts WHERE email = ?'),
    setPasswordHash: db.query('UPDATE accounts SET password_hash = ? WHERE id = ?'),
    byOidcSubject: db.query<AccountRow, [string]>('SELECT * FROM accounts WHERE oidc_subject = ?'),
    linkOidc: db.query('UPDATE accounts SET oidc_subject = ? WHERE id = ? AND oidc_subject IS NULL'),
    // A new account starts in the grant period the credits module names, its counters at their defaults (0).
    insert: db.query('INSERT INTO accounts (id, email, plan, grant_period, created_at) VALUES ($id, $email, $plan, $grant_period, $created_at)'),
    setPlan: db.query('UPDATE accounts SET plan = ? WHERE id = ?'),
    insertKey: db.query('INSERT INTO api_keys (id, account_id, name, start, hash, sandbox, scopes, created_at) VALUES ($id, $account_id, $name, $start, $hash, $sandbox, $scopes, $created_at)'),
    keyByHash: db.query<ApiKeyRow, [string]>('SELECT * FROM api_keys WHERE hash = ?'),
    keysOf: db.query<ApiKeyRow, [string]>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id'),
    keysMatching: db.query<ApiKeyRow, [string, string]>('SELECT * FROM api_keys WHERE id = ? OR start = ?'),
    revokeKey: db.query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    touchKey: db.query('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
  }
  return {
    transaction: transactions(db).write,
    countAccounts: () => q.count.get()!.n,
    findAccountByEmail: (email: string) => q.byEmail.get(email),
    findAccount: (id: string) => q.byId.get(id),
    /** the account of an email with its password hash (null when no password is set) */
    findPasswordByEmail: (email: string) => q.passwordByEmail.get(email),
    setPasswordHash: (id: string, hash: string) => { q.setPasswordHash.run(hash, id) },
    findAccountByOidcSubject: (subject: string) => q.byOidcSubject.get(subject),
    /** Links an unlinked account to an OIDC subject; false when the account already has one. */
    linkOidcSubject: (id: string, subject: string) => q.linkOidc.run(subject, id).changes > 0,
    insertAccount: (a: Pick<AccountRow, 'id' | 'email' | 'plan' | 'grant_period' | 'created_at'>) => { q.insert.run(a) },
    setPlan: (id: string, plan: AccountRow['plan']) => { q.setPlan.run(plan, id) },
    insertKey: (k: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>) => { q.insertKey.run(k) },
    findKeyByHash: (hash: string) => q.keyByHash.get(hash),
    listKeys: (accountId: string) => q.keysOf.all(accountId),
    findKeys: (idOrStart: string) => q.keysMatching.all(idOrStart, idOrStart),
    revokeKey: (id: string, at: string) => q.revokeKey.run(at, id).changes > 0,
    touchKey: (id: string, at: string) => { q.touchKey.run(at, id) },
  }
}
