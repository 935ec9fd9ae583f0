import type { Store } from '../../db/store'
import type { RetentionMode } from './model'

/** A row of retention_policies (migration 16): an account's own policy. */
export interface RetentionPolicyRow {
  account_id: string
  mode: RetentionMode
  days: number | null
  updated_at: string
}

export type RetentionRepo = ReturnType<typeof createRetentionRepo>

/** The accounts' own retention policies, the same SQL on both back ends. */
export function createRetentionRepo(store: Store) {
  const row = (r: RetentionPolicyRow | null): RetentionPolicyRow | null => (r ? { ...r, days: r.days === null ? null : Number(r.days) } : null)
  return {
    /** `lock`: inside a transaction, the row is held until it ends (a read-then-write) */
    get: async (accountId: string, lock = false) => row(await store.get<RetentionPolicyRow>(`SELECT * FROM retention_policies WHERE account_id = ?${lock ? store.sql.lock('update') : ''}`, [accountId])),
    put: (r: RetentionPolicyRow) => store.run(
      'INSERT INTO retention_policies (account_id, mode, days, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET mode = excluded.mode, days = excluded.days, updated_at = excluded.updated_at',
      [r.account_id, r.mode, r.days, r.updated_at]),
    remove: (accountId: string) => store.run('DELETE FROM retention_policies WHERE account_id = ?', [accountId]),
  }
}
