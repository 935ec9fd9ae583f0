import type { Database } from '../../db/database'
import type { UsageRow } from '../credits/repo'

export type { UsageRow }

export type UsageRepo = ReturnType<typeof createUsageRepo>

/** Reads of the usage history for `getUsage`; its rows are written by the credits module alone. */
export function createUsageRepo(db: Database) {
  const q = {
    recent: db.query<UsageRow, [string, number]>('SELECT * FROM usage WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?'),
    spentSince: db.query<{ n: number | null }, [string, string]>('SELECT sum(credits) AS n FROM usage WHERE account_id = ? AND created_at >= ?'),
  }
  return {
    recent: (accountId: string, limit: number) => q.recent.all(accountId, limit),
    spentSince: (accountId: string, since: string) => q.spentSince.get(accountId, since)?.n ?? 0,
  }
}
