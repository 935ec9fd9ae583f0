import type { Store } from '../../db/store'
import { createLeasedQueue, type InFlightCap, type QueueRow } from '../../jobs/queue'
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
  /** the team member who made it (migration 34); null in a personal workspace and before */
  made_by?: string | null
}

/** An event for an endpoint: a row of the leased queue (`jobs/queue.ts`) in `webhook_outbox`. */
export interface OutboxRow extends QueueRow {
  /** (`id`, inherited) the `webhook-id` header: the same on every attempt */
  webhook_id: string
  event_type: string
  /** the JSON body, fixed when the event happened */
  payload: string
  first_attempt_at: string | null
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

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>

/** How many deliveries may be under way at once, across every sender process. */
export interface InFlightLimits {
  /** to one endpoint (one registered webhook) */
  perEndpoint: number
  /** to the endpoints of one account, live and sandbox together */
  perAccount: number
}

/**
 * One delivery at a time per endpoint: a receiver that hangs holds one sender slot, not several, and
 * an endpoint gets its events one after another. At most 8 at a time per account (what one sender
 * took in a batch before): an account with many slow endpoints cannot fill the senders' slots
 * (docs/decisions.md, "Webhooks").
 */
export const IN_FLIGHT_LIMITS: InFlightLimits = { perEndpoint: 1, perAccount: 8 }

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))
const deliveryRow = (r: DeliveryRow): DeliveryRow => ({ ...r, attempt: Number(r.attempt), response_status: num(r.response_status), duration_ms: num(r.duration_ms) })

/**
 * The outbox's in-flight caps (jobs/queue.ts `InFlightCap`): a claim skips the events of an endpoint,
 * or of an account, that already has its most deliveries under way, so the queue moves on to others.
 */
function outboxCaps(limits: InFlightLimits): InFlightCap[] {
  return [
    { key: row => `${row}.webhook_id`, max: limits.perEndpoint },
    { key: row => `(SELECT hook.account_id FROM webhooks hook WHERE hook.id = ${row}.webhook_id)`, max: limits.perAccount },
  ]
}

/** Webhook endpoints, their outbox and their delivery log, on either back end. */
export function createWebhooksRepo(store: Store, limits: InFlightLimits = IN_FLIGHT_LIMITS) {
  const outbox = createLeasedQueue<OutboxRow>(store, 'webhook_outbox', { inFlightCaps: outboxCaps(limits) })
  const sandbox = (lib: Library) => (lib.sandbox ? 1 : 0)
  /** Stops all sending to an endpoint: disabled, and its waiting events failed (in the caller's transaction). */
  const disableIn = async (id: string, reason: string, at: string) => {
    await store.run('UPDATE webhooks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL', [at, reason, id])
    await store.run(`UPDATE webhook_outbox SET status = 'failed', updated_at = ? WHERE webhook_id = ? AND status = 'queued'`, [at, id])
  }
  return {
    /**
     * Inserts the endpoint unless its account (live and sandbox together) already has `max`; returns
     * how many it had. Counted and inserted by one writer at a time per account, so two requests at
     * once cannot both take the last place.
     */
    insertUnder: (r: WebhookRow, max: number): Promise<{ inserted: boolean; had: number }> => store.transaction(async () => {
      if (store.sql.namedLock) await store.get(store.sql.namedLock, [`webhooks:${r.account_id}`])
      const had = Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM webhooks WHERE account_id = ?', [r.account_id]))!.n)
      if (had >= max) return { inserted: false, had }
      await store.run(`INSERT INTO webhooks (id, account_id, sandbox, url, events, description, secret, disabled_at, disabled_reason, created_at, made_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [r.id, r.account_id, r.sandbox, r.url, r.events, r.description, r.secret, r.disabled_at, r.disabled_reason, r.created_at, r.made_by ?? null])
      return { inserted: true, had }
    }, 'write'),
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
      await store.run(`INSERT INTO webhook_outbox (id, webhook_id, event_type, payload, status, attempts, run_after, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', 0, ?, ?, ?)`,
        [r.id, r.webhook_id, r.event_type, r.payload, r.created_at, r.created_at, r.created_at])
    },
    /** the outbox as a leased queue: claim, fence, end, retry (jobs/queue.ts) */
    outbox,
    /** Logs one attempt and, on its first, when the event was first attempted; in the caller's transaction (a fenced end or retry). */
    async logAttempt(attempt: DeliveryRow): Promise<void> {
      await store.run('UPDATE webhook_outbox SET first_attempt_at = coalesce(first_attempt_at, ?) WHERE id = ?', [attempt.attempted_at, attempt.message_id])
      await store.run(`INSERT INTO webhook_deliveries (id, webhook_id, message_id, event_type, attempt, attempted_at, outcome, response_status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [attempt.id, attempt.webhook_id, attempt.message_id, attempt.event_type, attempt.attempt, attempt.attempted_at, attempt.outcome, attempt.response_status, attempt.error, attempt.duration_ms])
    },
    /** Stops all sending to an endpoint: disabled, and its waiting events failed (in the caller's transaction). */
    disable: disableIn,
    outboxOf: async (webhookId: string): Promise<OutboxRow[]> =>
      (await store.all<OutboxRow>('SELECT * FROM webhook_outbox WHERE webhook_id = ? ORDER BY created_at, id', [webhookId])).map(r => ({ ...r, attempts: Number(r.attempts), takeovers: Number(r.takeovers) })),

    deliveries: async (webhookId: string, since: string, limit: number): Promise<DeliveryRow[]> =>
      (await store.all<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND attempted_at >= ? ORDER BY attempted_at DESC, id DESC LIMIT ?', [webhookId, since, limit])).map(deliveryRow),
    /** Forgets attempts, and finished events, older than `before`. Returns how many rows went. */
    prune: (before: string): Promise<number> => store.transaction(async () =>
      (await store.run('DELETE FROM webhook_deliveries WHERE attempted_at < ?', [before]))
      + (await store.run(`DELETE FROM webhook_outbox WHERE status IN ('done', 'failed') AND updated_at < ?`, [before]))),
  }
}
