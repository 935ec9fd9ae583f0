import { transactions, type Database } from '../../db/database'
import type { Plan } from './model'

/**
 * One row of the credit ledger (table `usage`). `credits` is what the entry spent (negative for a
 * refund, 0 for a top-up); `grant_credits` and `purchased_credits` are what it took from each pool
 * (negative: credits given back to, or added to, that pool).
 */
export interface UsageRow {
  id: string
  account_id: string
  operation: string
  credits: number
  grant_credits: number
  purchased_credits: number
  source: 'api_key' | 'oauth' | 'mcp' | 'cli'
  note_id: string | null
  created_at: string
  refund_of?: string | null
}

/** The balance columns of an account. */
export interface BalanceRow {
  plan: Plan
  grant_period: string
  grant_used: number
  purchased_credits: number
}

export type CreditsRepo = ReturnType<typeof createCreditsRepo>

/** The only SQL of the ledger: the balance columns of `accounts` and the rows of `usage`. */
export function createCreditsRepo(db: Database) {
  const q = {
    balance: db.query<BalanceRow, [string]>('SELECT plan, grant_period, grant_used, purchased_credits FROM accounts WHERE id = ?'),
    setBalance: db.query('UPDATE accounts SET grant_period = $grant_period, grant_used = $grant_used, purchased_credits = $purchased_credits WHERE id = $id'),
    insert: db.query('INSERT INTO usage (id, account_id, operation, credits, grant_credits, purchased_credits, source, note_id, created_at, refund_of) VALUES ($id, $account_id, $operation, $credits, $grant_credits, $purchased_credits, $source, $note_id, $created_at, $refund_of)'),
    byId: db.query<UsageRow, [string]>('SELECT * FROM usage WHERE id = ?'),
    refundOf: db.query<UsageRow, [string]>('SELECT * FROM usage WHERE refund_of = ?'),
    // top-ups are ledger rows but not charges: getUsage's `recent` lists charges and refunds
    recentCharges: db.query<UsageRow, [string, number]>(`SELECT * FROM usage WHERE account_id = ? AND operation <> 'topUp' ORDER BY created_at DESC, id DESC LIMIT ?`),
    spentSince: db.query<{ n: number | null }, [string, string]>('SELECT sum(credits) AS n FROM usage WHERE account_id = ? AND created_at >= ?'),
  }
  return {
    /** An immediate transaction: the write lock is taken before the balance is read. */
    transaction: transactions(db).write,
    balance: (accountId: string) => q.balance.get(accountId),
    setBalance: (accountId: string, b: Omit<BalanceRow, 'plan'>) => { q.setBalance.run({ id: accountId, ...b }) },
    insert: (row: UsageRow) => { q.insert.run({ refund_of: null, ...row } as unknown as Record<string, string | number | null>) },
    get: (id: string) => q.byId.get(id),
    refundOf: (id: string) => q.refundOf.get(id),
    recentCharges: (accountId: string, limit: number) => q.recentCharges.all(accountId, limit),
    spentSince: (accountId: string, since: string) => q.spentSince.get(accountId, since)?.n ?? 0,
  }
}
