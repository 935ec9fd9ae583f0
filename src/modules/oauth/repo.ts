import type { Store } from '../../db/store'

export interface ClientRow {
  id: string
  secret_hash: string | null
  name: string
  redirect_uris: string
  token_endpoint_auth_method: string
  scope: string
  created_at: string
}

export interface CodeRow {
  code_hash: string
  client_id: string
  account_id: string
  redirect_uri: string
  scope: string
  code_challenge: string
  expires_at: string
  used_at: string | null
  /** the workspace chosen at consent (migration 32); null: the person's own */
  workspace_id: string | null
}

export interface TokenRow {
  id: string
  token_hash: string
  kind: 'access' | 'refresh'
  family_id: string
  client_id: string
  account_id: string
  scope: string
  created_at: string
  expires_at: string
  used_at: string | null
  revoked_at: string | null
  /** the workspace the grant acts in (migration 32); null: the person's own */
  workspace_id: string | null
}

/** an access token with the person's role in the token's workspace (null when they are no longer a member) */
export interface VerifiedTokenRow extends TokenRow {
  member_role: string | null
}

export type OAuthRepo = ReturnType<typeof createOAuthRepo>

/** The three OAuth tables of migration 3 (a grant's workspace: migration 32). Every secret (client secret, code, token) is kept as its SHA-256. */
export function createOAuthRepo(store: Store) {
  return {
    transaction: <T>(fn: () => Promise<T>) => store.transaction(fn),
    insertClient: async (r: ClientRow) => {
      await store.run('INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, scope, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [r.id, r.secret_hash, r.name, r.redirect_uris, r.token_endpoint_auth_method, r.scope, r.created_at])
    },
    client: (id: string) => store.get<ClientRow>('SELECT * FROM oauth_clients WHERE id = ?', [id]),
    insertCode: async (r: Omit<CodeRow, 'used_at'>) => {
      await store.run('INSERT INTO oauth_codes (code_hash, client_id, account_id, redirect_uri, scope, code_challenge, expires_at, workspace_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [r.code_hash, r.client_id, r.account_id, r.redirect_uri, r.scope, r.code_challenge, r.expires_at, r.workspace_id])
    },
    /** The code of a hash; inside a transaction, locked until it ends (the exchange reads, then marks it used). */
    code: (hash: string) => store.get<CodeRow>(`SELECT * FROM oauth_codes WHERE code_hash = ?${store.inTransaction ? store.sql.lock('update') : ''}`, [hash]),
    /** Marks a code used; false when it already was (a replay). */
    useCode: async (hash: string, at: string) => (await store.run('UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL', [at, hash])) === 1,
    removeCodesExpiredBefore: async (at: string) => { await store.run('DELETE FROM oauth_codes WHERE expires_at <= ?', [at]) },
    insertToken: async (r: Omit<TokenRow, 'used_at' | 'revoked_at'>) => {
      await store.run('INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, account_id, scope, created_at, expires_at, workspace_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [r.id, r.token_hash, r.kind, r.family_id, r.client_id, r.account_id, r.scope, r.created_at, r.expires_at, r.workspace_id])
    },
    /** One lookup on the unique index of token hashes; inside a transaction (a refresh), locked until it ends. */
    token: (hash: string) => store.get<TokenRow>(`SELECT * FROM oauth_tokens WHERE token_hash = ?${store.inTransaction ? store.sql.lock('update') : ''}`, [hash]),
    /**
     * The access-token check's one statement: the token of a hash with its person's role in the token's
     * workspace (docs/decisions.md "Workspaces"; as accounts' findKeyByHash reads a key's maker's, by a
   * scalar subquery: a joined row is read about nine times slower, docs/decisions.md "Workspaces").
     */
    accessToken: (hash: string) => store.get<VerifiedTokenRow>(
      `SELECT t.*, (SELECT m.role FROM workspace_members m WHERE m.workspace_id = t.workspace_id AND m.account_id = t.account_id) AS member_role
       FROM oauth_tokens t WHERE t.token_hash = ?`, [hash]),
    /** a person's role in a team workspace, null when not a member (a refresh of a grant to it checks it) */
    memberRole: async (workspaceId: string, accountId: string) => (await store.get<{ role: string }>(
      'SELECT role FROM workspace_members WHERE workspace_id = ? AND account_id = ?', [workspaceId, accountId]))?.role ?? null,
    /** Marks a refresh token exchanged; false when it already was, or is revoked. */
    useToken: async (id: string, at: string) => (await store.run('UPDATE oauth_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL', [at, id])) === 1,
    revokeToken: async (id: string, at: string) => { await store.run('UPDATE oauth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id]) },
    revokeFamily: async (familyId: string, at: string) => { await store.run('UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL', [at, familyId]) },
    removeTokensExpiredBefore: async (at: string) => { await store.run('DELETE FROM oauth_tokens WHERE expires_at <= ?', [at]) },
  }
}
