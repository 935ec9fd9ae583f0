import type { Store } from '../../db/store'

export interface SessionRow {
  account_id: string
  csrf_token: string
  expires_at: string
}

export type WebRepo = ReturnType<typeof createWebRepo>

/** The web module's tables: browser sessions, and the failed sign-ins counted for the brute-force limits. */
export function createWebRepo(store: Store) {
  return {
    insertSession: async (s: { idHash: string; accountId: string; csrf: string; createdAt: string; expiresAt: string }) => {
      await store.run('INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', [s.idHash, s.accountId, s.csrf, s.createdAt, s.expiresAt])
    },
    session: (idHash: string) => store.get<SessionRow>('SELECT account_id, csrf_token, expires_at FROM sessions WHERE id_hash = ?', [idHash]),
    removeSession: async (idHash: string) => { await store.run('DELETE FROM sessions WHERE id_hash = ?', [idHash]) },
    removeSessionsExpiredBy: async (at: string) => { await store.run('DELETE FROM sessions WHERE expires_at <= ?', [at]) },
    /** failures of `key` after `since`: how many, and when the oldest and the newest of them were */
    failuresSince: async (key: string, since: string) => {
      const row = (await store.get<{ n: number | string; oldest: string | null; newest: string | null }>('SELECT count(*) AS n, min(at) AS oldest, max(at) AS newest FROM sign_in_failures WHERE key = ? AND at > ?', [key, since]))!
      return { n: Number(row.n), oldest: row.oldest, newest: row.newest }
    },
    addFailure: async (key: string, at: string) => { await store.run('INSERT INTO sign_in_failures (key, at) VALUES (?, ?)', [key, at]) },
    clearFailures: async (key: string) => { await store.run('DELETE FROM sign_in_failures WHERE key = ?', [key]) },
    removeFailuresUpTo: async (at: string) => { await store.run('DELETE FROM sign_in_failures WHERE at <= ?', [at]) },
  }
}
