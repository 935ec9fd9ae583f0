import type { Database } from '../../db/database'

export interface SessionRow {
  account_id: string
  csrf_token: string
  expires_at: string
}

export type WebRepo = ReturnType<typeof createWebRepo>

/** The web module's tables: browser sessions, and the failed sign-ins counted for the brute-force limits. */
export function createWebRepo(db: Database) {
  const q = {
    insertSession: db.query('INSERT INTO sessions (id_hash, account_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)'),
    session: db.query<SessionRow, [string]>('SELECT account_id, csrf_token, expires_at FROM sessions WHERE id_hash = ?'),
    removeSession: db.query('DELETE FROM sessions WHERE id_hash = ?'),
    removeExpiredSessions: db.query('DELETE FROM sessions WHERE expires_at <= ?'),
    failures: db.query<{ n: number; oldest: string | null }, [string, string]>('SELECT count(*) AS n, min(at) AS oldest FROM sign_in_failures WHERE key = ? AND at > ?'),
    addFailure: db.query('INSERT INTO sign_in_failures (key, at) VALUES (?, ?)'),
    clearFailures: db.query('DELETE FROM sign_in_failures WHERE key = ?'),
    pruneFailures: db.query('DELETE FROM sign_in_failures WHERE at <= ?'),
  }
  return {
    insertSession: (s: { idHash: string; accountId: string; csrf: string; createdAt: string; expiresAt: string }) => {
      q.insertSession.run(s.idHash, s.accountId, s.csrf, s.createdAt, s.expiresAt)
    },
    session: (idHash: string) => q.session.get(idHash),
    removeSession: (idHash: string) => { q.removeSession.run(idHash) },
    removeSessionsExpiredBy: (at: string) => { q.removeExpiredSessions.run(at) },
    /** failures of `key` after `since`: how many, and when the oldest of them was */
    failuresSince: (key: string, since: string) => q.failures.get(key, since)!,
    addFailure: (key: string, at: string) => { q.addFailure.run(key, at) },
    clearFailures: (key: string) => { q.clearFailures.run(key) },
    removeFailuresUpTo: (at: string) => { q.pruneFailures.run(at) },
  }
}
