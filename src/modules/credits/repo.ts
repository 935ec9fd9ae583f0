import type { Store } from '../../db/store'
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
  /** the person who spent (a team workspace's member; migration 32), null when not known (the CLI, older rows) */
  actor_id?: string | null
}

/** The balance columns of an account. */
export interface BalanceRow {
  plan: Plan
  /** a person's own account or a team workspace's row (migration 32); absent on rows built by hand */
  kind?: 'person' | 'team'
  grant_period: string
  grant_used: number
  purchased_credits: number
}

export type CreditsRepo = ReturnType<typeof createCreditsRepo>

/** The only SQL of the ledger: the balance columns of `accounts` and the rows of `usage`. */
export function createCreditsRepo(store: Store) {
  return {
    /**
     * A write transaction: on SQLite the write lock is taken before the balance is read (BEGIN
     * IMMEDIATE); on PostgreSQL `balance(…, { lock: true })` locks the account's row until it ends.
     */
    transaction: <T>(fn: () => Promise<T>) => store.transaction(fn),
    /** The balance columns; `lock` (inside a transaction) keeps other transactions, on any node, from changing them until this one ends. */
    balance: (accountId: string, opts: { lock?: boolean } = {}) =>
      store.get<BalanceRow>(`SELECT plan, kind, grant_period, grant_used, purchased_credits FROM accounts WHERE id = ?${opts.lock ? store.sql.lock('update') : ''}`, [accountId]),
    setBalance: async (accountId: string, b: Omit<BalanceRow, 'plan' | 'kind'>) => {
      await store.run('UPDATE accounts SET grant_period = ?, grant_used = ?, purchased_credits = ? WHERE id = ?', [b.grant_period, b.grant_used, b.purchased_credits, accountId])
    },
    insert: async (row: UsageRow) => {
      await store.run('INSERT INTO usage (id, account_id, operation, credits, grant_credits, purchased_credits, source, note_id, created_at, refund_of, actor_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [row.id, row.account_id, row.operation, row.credits, row.grant_credits, row.purchased_credits, row.source, row.note_id, row.created_at, row.refund_of ?? null, row.actor_id ?? null])
    },
    get: (id: string) => store.get<UsageRow>('SELECT * FROM usage WHERE id = ?', [id]),
    refundOf: (id: string) => store.get<UsageRow>('SELECT * FROM usage WHERE refund_of = ?', [id]),
    // top-ups are ledger rows but not charges: getUsage's `recent` lists charges and refunds
    recentCharges: (accountId: string, limit: number) => store.all<UsageRow>(`SELECT * FROM usage WHERE account_id = ? AND operation <> 'topUp' ORDER BY created_at DESC, id DESC LIMIT ?`, [accountId, limit]),
    spentSince: async (accountId: string, since: string) =>
      Number((await store.get<{ n: number | string | null }>('SELECT sum(credits) AS n FROM usage WHERE account_id = ? AND created_at >= ?', [accountId, since]))?.n ?? 0),
  }
}
