import type { Store } from '../../db/store'
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
  /** the member who made it (migration 32); null: the workspace's own account (a personal key) */
  made_by?: string | null
}

/** a key with its maker's role in the key's workspace (null when the maker is no longer a member) */
export interface VerifiedKeyRow extends ApiKeyRow {
  member_role: string | null
}

export type AccountsRepo = ReturnType<typeof createAccountsRepo>

export function createAccountsRepo(store: Store) {
  // Emails are unique without regard to ASCII case (the column's unique rule); the comparison is the
  // one that rule's index answers.
  const emailIs = store.sql.caselessEquals('email')
  return {
    transaction: <T>(fn: () => Promise<T>) => store.transaction(fn),
    countAccounts: async () => Number((await store.get<{ n: number | string }>("SELECT count(*) AS n FROM accounts WHERE kind = 'person'"))!.n),
    /** Account ids in id order after `after` (keyset paging), at most `limit`. */
    accountIdsAfter: async (after: string, limit: number) => (await store.all<{ id: string }>('SELECT id FROM accounts WHERE id > ? ORDER BY id LIMIT ?', [after, limit])).map(r => r.id),
    findAccountByEmail: (email: string) => store.get<AccountRow>(`SELECT * FROM accounts WHERE ${emailIs}`, [email]),
    findAccount: (id: string) => store.get<AccountRow>('SELECT * FROM accounts WHERE id = ?', [id]),
    /** the account of an email with its password hash (null when no password is set) */
    findPasswordByEmail: (email: string) => store.get<{ id: string; password_hash: string | null }>(`SELECT id, password_hash FROM accounts WHERE ${emailIs} AND kind = 'person'`, [email]),
    setPasswordHash: async (id: string, hash: string) => { await store.run('UPDATE accounts SET password_hash = ? WHERE id = ?', [hash, id]) },
    /** the account the ID-token link of migration 3 (`oidc_subject`) names; nothing writes it any more (src/modules/sso/links.ts) */
    findAccountByOidcSubject: (subject: string) => store.get<AccountRow>('SELECT * FROM accounts WHERE oidc_subject = ?', [subject]),
    /**
     * Creates an account unless one has this email already (another node may have created it a moment
     * ago): false then. A new account starts in the grant period the credits module names, its
     * counters at their defaults (0).
     */
    insertAccount: async (a: Pick<AccountRow, 'id' | 'email' | 'plan' | 'grant_period' | 'created_at'>) =>
      (await store.run('INSERT INTO accounts (id, email, plan, grant_period, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [a.id, a.email, a.plan, a.grant_period, a.created_at])) > 0,
    setPlan: async (id: string, plan: AccountRow['plan']) => { await store.run('UPDATE accounts SET plan = ? WHERE id = ?', [plan, id]) },
    insertKey: async (k: Omit<ApiKeyRow, 'last_used_at' | 'revoked_at'>) => {
      await store.run('INSERT INTO api_keys (id, account_id, name, start, hash, sandbox, scopes, created_at, made_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [k.id, k.account_id, k.name, k.start, k.hash, k.sandbox, k.scopes, k.created_at, k.made_by ?? null])
    },
    /**
     * The key of a hash, with its maker's role in its workspace (one statement: verification's, on
     * every request whose key is not in the key cache). The role is a scalar subquery, not a join:
     * the embedded database reads a joined row about nine times slower (14 against 1.6 µs a row here), 12% of an
     * uncached page's time (bench/list-notes-compare.ts).
     */
    findKeyByHash: (hash: string) => store.get<VerifiedKeyRow>(
      `SELECT k.*, (SELECT m.role FROM workspace_members m WHERE m.workspace_id = k.account_id AND m.account_id = k.made_by) AS member_role
       FROM api_keys k WHERE k.hash = ?`, [hash]),
    listKeys: (accountId: string) => store.all<ApiKeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id', [accountId]),
    findKeys: (idOrStart: string) => store.all<ApiKeyRow>('SELECT * FROM api_keys WHERE id = ? OR start = ?', [idOrStart, idOrStart]),
    revokeKey: async (id: string, at: string) => (await store.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id])) > 0,
    touchKey: async (id: string, at: string) => { await store.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [at, id]) },
    /** a member's last activity in a workspace (a team key of theirs used) */
    touchMember: async (workspaceId: string, accountId: string, at: string) => {
      await store.run('UPDATE workspace_members SET last_active_at = ? WHERE workspace_id = ? AND account_id = ?', [at, workspaceId, accountId])
    },
  }
}
