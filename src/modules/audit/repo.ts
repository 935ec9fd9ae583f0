import type { Queryable, Store } from '../../db/store'

/** A row of audit_events (migration 15). */
export interface AuditEventRow {
  id: string
  at: string
  account_id: string | null
  actor_type: string
  actor_id: string | null
  action: string
  target_type: string | null
  target_id: string | null
  ip: string | null
  user_agent: string | null
  details: string
}

export type AuditRepo = ReturnType<typeof createAuditRepo>

/** The audit log's SQL, the same on both back ends: append, read an account's page, prune by age. */
export function createAuditRepo(store: Store) {
  return {
    /** Appends one event; `q` is the transaction the audited change runs in, when there is one. */
    append: (row: AuditEventRow, q: Queryable = store) =>
      q.run('INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action, target_type, target_id, ip, user_agent, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [row.id, row.at, row.account_id, row.actor_type, row.actor_id, row.action, row.target_type, row.target_id, row.ip, row.user_agent, row.details]),

    /** An account's events, newest first, after the cursor (the last row's at and id). */
    page: (accountId: string, limit: number, before?: { at: string; id: string }) =>
      before
        ? store.all<AuditEventRow>('SELECT * FROM audit_events WHERE account_id = ? AND (at < ? OR (at = ? AND id < ?)) ORDER BY at DESC, id DESC LIMIT ?', [accountId, before.at, before.at, before.id, limit])
        : store.all<AuditEventRow>('SELECT * FROM audit_events WHERE account_id = ? ORDER BY at DESC, id DESC LIMIT ?', [accountId, limit]),

    /** Removes events older than `cutoff` (ISO time): the audit log's own retention. How many went. */
    pruneBefore: (cutoff: string) => store.run('DELETE FROM audit_events WHERE at < ?', [cutoff]),
  }
}
