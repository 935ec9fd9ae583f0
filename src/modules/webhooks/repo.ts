import type { Store } from '../../db/store'
import type { Library } from '../library'

export interface WebhookRow {
  id: string
  account_id: string
  sandbox: number
  url: string
  /** JSON array of event names */
  events: string
  description: string | null
  secret: string
  disabled_at: string | null
  disabled_reason: string | null
  created_at: string
}

export interface OutboxRow {
  /** the `webhook-id` header: the same on every attempt */
  id: string
  webhook_id: string
  event_type: string
  /** the JSON body, fixed when the event happened */
  payload: string
  status: 'pending' | 'delivered' | 'failed'
  /** claims so far; with lease_owner it names one claim (the fencing token) */
  attempts: number
  /** when the row is next due; while claimed, when the claim's lease runs out */
  run_after: string
  lease_owner: string | null
  first_attempt_at: string | null
  created_at: string
  updated_at: string
}

export interface DeliveryRow {
  id: string
  webhook_id: string
  message_id: string
  event_type: string
  attempt: number
  attempted_at: string
  outcome: 'delivered' | 'failed' | 'disabled' | 'refused'
  response_status: number | null
  error: string | null
  duration_ms: number | null
}

/** One claim of an outbox row: who took it and which claim it was. Its writes are fenced by both. */
export interface OutboxClaim {
  id: string
  owner: string
  attempt: number
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
const outboxRow = (r: OutboxRow): OutboxRow => ({ ...r, attempts: Number(r.attempts) })
const deliveryRow = (r: DeliveryRow): DeliveryRow => ({ ...r, attempt: Number(r.attempt), response_status: num(r.response_status), duration_ms: num(r.duration_ms) })

/**
 * The claim, as the jobs queue claims (src/jobs/repo.ts): up to `limit` due rows, each moved past its
 * lease (run_after) and marked with the claimer and the claim's number, in one statement. On
 * PostgreSQL candidates are locked as they are read and rows another node's claim holds are skipped
 * (FOR UPDATE SKIP LOCKED); on SQLite the statement runs under the one write lock. Parameters: owner,
 * lease end, first attempt time, now, now, limit.
 */
const claimSql = (dialect: Store['dialect']) => `
  UPDATE webhook_outbox SET attempts = attempts + 1, lease_owner = ?, run_after = ?, first_attempt_at = coalesce(first_attempt_at, ?), updated_at = ?
  WHERE id IN (SELECT id FROM webhook_outbox WHERE status = 'pending' AND run_after <= ? ORDER BY run_after LIMIT ?${dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''})
  RETURNING *`

/** The row still names this claim. Parameters: id, owner, attempt. */
const HELD = `id = ? AND lease_owner = ? AND attempts = ? AND status = 'pending'`

/** Webhook endpoints, their outbox and their delivery log, on either back end. */
export function createWebhooksRepo(store: Store) {
  const claim = claimSql(store.dialect)
  const sandbox = (lib: Library) => (lib.sandbox ? 1 : 0)
  const held = (c: OutboxClaim) => [c.id, c.owner, c.attempt]
  /** Stops all sending to an endpoint: disabled, and its waiting events failed (in the caller's transaction). */
  const disableIn = async (id: string, reason: string, at: string) => {
    await store.run('UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL', [at, reason, id])
    await store.run(`UPDATE webhook_outbox SET status = 'failed', updated_at = ? WHERE webhook_id = ? AND status = 'pending'`, [at, id])
  }
  return {
    insert: async (r: WebhookRow): Promise<void> => {
      await store.run(`INSERT INTO webhooks (id, account_id, sandbox, url, events, description, secret, disabled_at, disabled_reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [r.id, r.account_id, r.sandbox, r.url, r.events, r.description, r.secret, r.disabled_at, r.disabled_reason, r.created_at])
    },
    list: (lib: Library): Promise<WebhookRow[]> =>
      store.all<WebhookRow>('SELECT * FROM webhooks WHERE account_id = ? AND sandbox = ? ORDER BY created_at DESC, id DESC', [lib.accountId, sandbox(lib)]),
    get: (lib: Library, id: string): Promise<WebhookRow | null> =>
      store.get<WebhookRow>('SELECT * FROM webhooks WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)]),
    byId: (id: string): Promise<WebhookRow | null> => store.get<WebhookRow>('SELECT * FROM webhooks WHERE id = ?', [id]),
    /** Deletes the endpoint; its outbox rows and delivery log go with it (ON DELETE CASCADE). */
    delete: async (lib: Library, id: string): Promise<boolean> =>
      (await store.run('DELETE FROM webhooks WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)])) === 1,
    /** The endpoints of a library that still receive events. */
    enabled: (lib: Library): Promise<WebhookRow[]> =>
      store.all<WebhookRow>('SELECT * FROM webhooks WHERE account_id = ? AND sandbox = ? AND disabled_at IS NULL', [lib.accountId, sandbox(lib)]),

    enqueue: async (r: Pick<OutboxRow, 'id' | 'webhook_id' | 'event_type' | 'payload' | 'created_at'>): Promise<void> => {
      await store.run(`INSERT INTO webhook_outbox (id, webhook_id, event_type, payload, status, attempts, run_after, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
        [r.id, r.webhook_id, r.event_type, r.payload, r.created_at, r.created_at, r.created_at])
    },
    /** Whether a claim at `at` would find a row: a read, so an idle sender looks without taking the write lock. */
    anyDue: async (at: string): Promise<boolean> =>
      (await store.get(`SELECT 1 AS one FROM webhook_outbox WHERE status = 'pending' AND run_after <= ? LIMIT 1`, [at])) !== null,
    claim: async (owner: string, at: string, leaseUntil: string, limit: number): Promise<OutboxRow[]> => {
      const take = async () => (await store.all<OutboxRow>(claim, [owner, leaseUntil, at, at, at, limit])).map(outboxRow)
      return store.dialect === 'sqlite' ? store.transaction(take, 'write') : take()
    },
    /**
     * Ends or reschedules one claim, with its attempt logged, in one transaction, only while the claim
     * still holds the row; false (nothing written) when it no longer does.
     */
    settle: (c: OutboxClaim, next: { status: 'pending' | 'delivered' | 'failed'; runAfter?: string }, attempt: DeliveryRow | null, at: string, disable: string | null = null): Promise<boolean> => store.transaction(async () => {
      const changed = await store.run(`UPDATE webhook_outbox SET status = ?, run_after = coalesce(?, run_after), lease_owner = NULL, updated_at = ? WHERE ${HELD}`,
        [next.status, next.runAfter ?? null, at, ...held(c)])
      if (changed !== 1) return false
      if (attempt) {
        await store.run(`INSERT INTO webhook_deliveries (id, webhook_id, message_id, event_type, attempt, attempted_at, outcome, response_status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [attempt.id, attempt.webhook_id, attempt.message_id, attempt.event_type, attempt.attempt, attempt.attempted_at, attempt.outcome, attempt.response_status, attempt.error, attempt.duration_ms])
      }
      if (disable !== null && attempt) await disableIn(attempt.webhook_id, disable, at)
      return true
    }, 'write'),
    outboxOf: async (webhookId: string): Promise<OutboxRow[]> =>
      (await store.all<OutboxRow>('SELECT * FROM webhook_outbox WHERE webhook_id = ? ORDER BY created_at, id', [webhookId])).map(outboxRow),

    deliveries: async (webhookId: string, since: string, limit: number): Promise<DeliveryRow[]> =>
      (await store.all<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND attempted_at >= ? ORDER BY attempted_at DESC, id DESC LIMIT ?', [webhookId, since, limit])).map(deliveryRow),
    /** Forgets attempts, and finished events, older than `before`. Returns how many rows went. */
    prune: (before: string): Promise<number> => store.transaction(async () =>
      (await store.run('DELETE FROM webhook_deliveries WHERE attempted_at < ?', [before]))
      + (await store.run(`DELETE FROM webhook_outbox WHERE status <> 'pending' AND updated_at < ?`, [before]))),
  }
}
