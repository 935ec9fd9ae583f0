import { transactions, type Database } from '../../db/database'

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
}

export type OAuthRepo = ReturnType<typeof createOAuthRepo>

/** The three OAuth tables of migration 3. Every secret (client secret, code, token) is kept as its SHA-256. */
export function createOAuthRepo(db: Database) {
  const q = {
    insertClient: db.query('INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, scope, created_at) VALUES ($id, $secret_hash, $name, $redirect_uris, $token_endpoint_auth_method, $scope, $created_at)'),
    client: db.query<ClientRow, [string]>('SELECT * FROM oauth_clients WHERE id = ?'),
    insertCode: db.query('INSERT INTO oauth_codes (code_hash, client_id, account_id, redirect_uri, scope, code_challenge, expires_at) VALUES ($code_hash, $client_id, $account_id, $redirect_uri, $scope, $code_challenge, $expires_at)'),
    code: db.query<CodeRow, [string]>('SELECT * FROM oauth_codes WHERE code_hash = ?'),
    useCode: db.query<unknown, [string, string]>('UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL'),
    removeOldCodes: db.query<unknown, [string]>('DELETE FROM oauth_codes WHERE expires_at <= ?'),
    insertToken: db.query('INSERT INTO oauth_tokens (id, token_hash, kind, family_id, client_id, account_id, scope, created_at, expires_at) VALUES ($id, $token_hash, $kind, $family_id, $client_id, $account_id, $scope, $created_at, $expires_at)'),
    token: db.query<TokenRow, [string]>('SELECT * FROM oauth_tokens WHERE token_hash = ?'),
    useToken: db.query<unknown, [string, string]>('UPDATE oauth_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL'),
    revokeToken: db.query<unknown, [string, string]>('UPDATE oauth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    revokeFamily: db.query<unknown, [string, string]>('UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL'),
    removeExpiredTokens: db.query<unknown, [string]>('DELETE FROM oauth_tokens WHERE expires_at <= ?'),
  }
  return {
    transaction: transactions(db).write,
    insertClient: (row: ClientRow) => void q.insertClient.run(row as never),
    client: (id: string) => q.client.get(id),
    insertCode: (row: Omit<CodeRow, 'used_at'>) => void q.insertCode.run(row as never),
    code: (hash: string) => q.code.get(hash),
    /** Marks a code used; false when it already was (a replay). */
    useCode: (hash: string, at: string) => q.useCode.run(at, hash).changes === 1,
    removeCodesExpiredBefore: (at: string) => void q.removeOldCodes.run(at),
    insertToken: (row: Omit<TokenRow, 'used_at' | 'revoked_at'>) => void q.insertToken.run(row as never),
    /** One lookup on the unique index of token hashes. */
    token: (hash: string) => q.token.get(hash),
    /** Marks a refresh token exchanged; false when it already was, or is revoked. */
    useToken: (id: string, at: string) => q.useToken.run(at, id).changes === 1,
    revokeToken: (id: string, at: string) => void q.revokeToken.run(at, id),
    revokeFamily: (familyId: string, at: string) => void q.revokeFamily.run(at, familyId),
    removeTokensExpiredBefore: (at: string) => void q.removeExpiredTokens.run(at),
  }
}
