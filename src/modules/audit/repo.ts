import type { Queryable, Store } from '../../db/store'

/** A row of audit_events (migrations 15 and 19). */
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
  /** how many reads the row counts (1 for every other event) */
  count: number
  /** a read's latest time (null for every other event, whose one time is `at`) */
  last_at: string | null
  /** names a read's row of one slot (null for every other event) */
  read_key: string | null
}

export type AuditRepo = ReturnType<typeof createAuditRepo>

/** Events a statement of the audit log's prune removes at most: each a short write, however large the log. */
const PRUNE_BATCH = 5000

const INSERT = 'INSERT INTO audit_events (id, at, account_id, actor_type, actor_id, action, target_type, target_id, ip, user_agent, details, last_at, read_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'
const values = (row: AuditEventRow) => [row.id, row.at, row.account_id, row.actor_type, row.actor_id, row.action, row.target_type, row.target_id, row.ip, row.user_agent, row.details, row.last_at, row.read_key]

/**
 * The audit log's SQL, the same on both back ends: append, count a read, read an account's page, prune
 * by age. `pruneBatch`: the events one DELETE of the prune removes (PRUNE_BATCH; smaller in tests).
 */
export function createAuditRepo(store: Store, o: { pruneBatch?: number } = {}) {
  const pruneBatch = o.pruneBatch ?? PRUNE_BATCH
  // a read's latest time: the later of the row's and this read's (clocks of two nodes may disagree)
  const countRead = `${INSERT} ON CONFLICT (read_key) DO UPDATE SET count = audit_events.count + 1, last_at = ${store.sql.greatest('audit_events.last_at', 'excluded.last_at')}`
  return {
    /** Appends one event; `q` is the transaction the audited change runs in, when there is one. */
    append: (row: AuditEventRow, q: Queryable = store) => q.run(INSERT, values(row)),

    /**
     * Counts a read: appends its row (`read_key` set), or, when the slot's row of that key is there,
     * adds one to its count and moves its last time. One statement, so two reads at once on two nodes
     * make one row counting 2 (the unique read_key decides; migration 19's trigger allows this growth
     * and nothing else).
     */
    appendRead: (row: AuditEventRow & { read_key: string }, q: Queryable = store) => q.run(countRead, values(row)),

    /**
     * An account's events, newest first, after the cursor (the last row's at and id), optionally of one
     * action and at or after `since`.
     */
    page: (accountId: string, limit: number, o: { before?: { at: string; id: string }; action?: string; since?: string } = {}) => {
      const { where, params } = conditions({ accountId, past: o.before && { ...o.before, side: '<' }, action: o.action, since: o.since })
      return store.all<AuditEventRow>(`SELECT * FROM audit_events${where} ORDER BY at DESC, id DESC LIMIT ?`, [...params, limit])
    },

    /**
     * Events oldest first after `after` (the last row's at and id), of one account or (null) of all,
     * at or after `since`: one batch of an export.
     */
    ascending: (o: { accountId: string | null; limit: number; after?: { at: string; id: string }; since?: string }) => {
      const { where, params } = conditions({ accountId: o.accountId, past: o.after && { ...o.after, side: '>' }, since: o.since })
      return store.all<AuditEventRow>(`SELECT * FROM audit_events${where} ORDER BY at, id LIMIT ?`, [...params, o.limit])
    },

    /**
     * Removes events older than `cutoff` (ISO time): the audit log's own retention. How many went. In
     * batches of `pruneBatch` (the oldest first, off the `at` index), each its own statement, so the
     * first prune of a large log never holds SQLite's write lock for the whole of it: a sign-in's
     * event waits at most one batch.
     */
    pruneBefore: async (cutoff: string): Promise<number> => {
      let total = 0
      for (;;) {
        const n = await store.run('DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE at < ? ORDER BY at LIMIT ?)', [cutoff, pruneBatch])
        total += n
        if (n < pruneBatch) return total
      }
    },
  }
}

/**
 * The WHERE clause of a read of the log: one account's events (null: every account's), on the far
 * side of a keyset cursor (`<` newest first, `>` oldest first, by at then id), of one action, at or
 * after `since`.
 */
function conditions(o: { accountId: string | null; past?: { at: string; id: string; side: '<' | '>' }; action?: string; since?: string }) {
  const clauses: string[] = []
  const params: string[] = []
  if (o.accountId !== null) {
    clauses.push('account_id = ?')
    params.push(o.accountId)
  }
  if (o.past) {
    clauses.push(`(at ${o.past.side} ? OR (at = ? AND id ${o.past.side} ?))`)
    params.push(o.past.at, o.past.at, o.past.id)
  }
  if (o.action) {
    clauses.push('action = ?')
    params.push(o.action)
  }
  if (o.since) {
    clauses.push('at >= ?')
    params.push(o.since)
  }
  return { where: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', params }
}
