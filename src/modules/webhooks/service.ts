import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Logger } from '../../log'
import { ApiError } from '../../http/errors'
import { UrlRefusedError, vetUrl, type LookupFn } from '../../net/outbound'
import type { Library } from '../library'
import { madeBy, type Principal } from '../../http/principal'
import type { CreatedWebhook, CreateWebhookRequest, Webhook, WebhookDelivery, WebhookEvent, WebhookPayload, WebhookSpeaker, WebhookTag } from './model'
import type { RetryPolicy } from '../../jobs/queue'
import { createDeliveryAttempt } from './delivery'
import type { DeliveryRow, OutboxRow, WebhookRow, WebhooksRepo } from './repo'
import { createWebhookSender, DELIVERY_LEASE_MS, DELIVERY_TIMEOUT_MS, GIVE_UP_AFTER_MS, KEEP_DELIVERIES_MS, RETRY_DELAYS_MS, SANDBOX_RETRY_DELAYS_MS, SENDER_SLOTS, WEBHOOK_RETRIES } from './sender'

export { DELIVERY_TIMEOUT_MS, SENDER_SLOTS } from './sender'

const DELIVERIES_SHOWN = 100
/** How many endpoints one account may register, live and sandbox together (NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT). */
const DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT = 25

export type WebhooksService = ReturnType<typeof createWebhooksService>

/** The final state of a note, as the notes service reports it inside the transaction that writes it. */
export interface NoteSettled {
  noteId: string
  accountId: string
  sandbox: boolean
  status: 'Done' | 'Error'
  errorCode: string | null
  /** the note's speakers when it was diarized */
  speakers?: WebhookSpeaker[]
  /** the note's tags (notes.tags as JSON), null or absent for none */
  tags?: string | null
}

/** A note's transcript edited, as the notes service reports it inside the edit's transaction. */
export interface NoteUpdated {
  noteId: string
  accountId: string
  sandbox: boolean
  version: number
  change: string
  segments: number[]
  /** the note's tags (notes.tags as JSON), null or absent for none */
  tags?: string | null
}

/** An event's `tags`, present when the note carries any. */
const tagsOf = (json: string | null | undefined): { tags?: WebhookTag[] } => (json ? { tags: JSON.parse(json) as WebhookTag[] } : {})

export interface WebhooksDeps {
  repo: WebhooksRepo
  clock: Clock
  ids: IdGenerator
  log: Logger
  /** NOTESVC_ALLOW_PRIVATE_URLS: http and private addresses allowed (development and tests) */
  allowPrivateUrls: boolean
  /** DNS resolution (default: the system resolver) */
  lookup?: LookupFn
  /** the retry schedule; tests pass a short one */
  retryDelaysMs?: number[]
  /** the retry schedule of sandbox endpoints (default SANDBOX_RETRY_DELAYS_MS; `retryDelaysMs` when only that is given) */
  sandboxRetryDelaysMs?: number[]
  /**
   * whether a note's events to sandbox endpoints are the sandbox scenario `webhook_retry` (its upload's
   * file name names it): the first attempt of each is then recorded as failed, and retried
   */
  webhookRetryScenario?: (noteId: string) => Promise<boolean>
  giveUpAfterMs?: number
  timeoutMs?: number
  leaseMs?: number
  /** how often an idle sender looks for due events */
  pollMs?: number
  /** deliveries under way at once in this process (default SENDER_SLOTS) */
  slots?: number
  /** endpoints one account may register (default DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT) */
  maxPerAccount?: number
  /** told the outcome of every attempt this process made (the metrics) */
  onDelivery?: (outcome: DeliveryRow['outcome']) => void
}

function toWebhook(r: WebhookRow): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    description: r.description,
    sandbox: Number(r.sandbox) === 1,
    disabled: r.disabled_at !== null,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
    createdAt: r.created_at,
  }
}

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    messageId: r.message_id,
    event: r.event_type,
    attempt: r.attempt,
    attemptedAt: r.attempted_at,
    status: r.outcome,
    responseCode: r.response_status,
    error: r.error,
    durationMs: r.duration_ms,
  }
}

/** What the first attempt of a `webhook_retry` note's event is recorded with, though its endpoint took it. */
const WEBHOOK_RETRY_ERROR = 'sandbox scenario webhook_retry: the endpoint took this first attempt, but it is recorded as failed so that the event is sent again (the same webhook-id); name the upload otherwise for a single delivery'

/**
 * The sandbox scenario `webhook_retry` for the sender: the reason a sandbox endpoint's first attempt of
 * an event of a `webhook_retry` note is recorded as failed, or null for any other event.
 */
function webhookRetryReason(isScenario: (noteId: string) => Promise<boolean>) {
  return async (row: OutboxRow): Promise<string | null> => {
    const { data } = JSON.parse(row.payload) as { data?: { noteId?: unknown } }
    return typeof data?.noteId === 'string' && (await isScenario(data.noteId)) ? WEBHOOK_RETRY_ERROR : null
  }
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`

/**
 * Webhook endpoints and the delivery of their events: an outbox row per event and endpoint, written
 * in the transaction of the note's final state (`noteSettled`), sent by a loop in every process that
 * runs workers (`start`), signed with the Standard Webhooks library, retried on a schedule for a day.
 */
export function createWebhooksService(deps: WebhooksDeps) {
  const { repo, clock, ids, log } = deps
  const retries: RetryPolicy = { ...WEBHOOK_RETRIES, delaysMs: deps.retryDelaysMs ?? RETRY_DELAYS_MS, giveUpAfterMs: deps.giveUpAfterMs ?? GIVE_UP_AFTER_MS }
  const sandboxRetries: RetryPolicy = { ...retries, delaysMs: deps.sandboxRetryDelaysMs ?? deps.retryDelaysMs ?? SANDBOX_RETRY_DELAYS_MS }
  const maxPerAccount = deps.maxPerAccount ?? DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT
  const policy = { allowPrivate: deps.allowPrivateUrls, lookup: deps.lookup }
  const iso = (ms: number) => new Date(ms).toISOString()
  const sender = createWebhookSender({
    repo, clock, ids, log, retries, sandboxRetries,
    failsFirstAttempt: deps.webhookRetryScenario ? webhookRetryReason(deps.webhookRetryScenario) : undefined,
    leaseMs: deps.leaseMs ?? DELIVERY_LEASE_MS,
    slots: deps.slots ?? SENDER_SLOTS,
    pollMs: deps.pollMs ?? 1000,
    attempt: createDeliveryAttempt({ clock, policy, timeoutMs: deps.timeoutMs ?? DELIVERY_TIMEOUT_MS }),
    onDelivery: deps.onDelivery,
  })

  const notFound = (id: string) => new ApiError('not_found', `No webhook with id ${id} exists in this library; GET /v1/webhooks lists them.`)

  async function requireWebhook(lib: Library, id: string): Promise<WebhookRow> {
    const row = await repo.get(lib, id)
    if (!row) throw notFound(id)
    return row
  }

  /** The URL checked as `audioUrl` is (scheme, port, every address it resolves to): 400 naming `url`. */
  async function checkUrl(url: string): Promise<void> {
    try {
      await vetUrl(url, policy)
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      const hint = err instanceof UrlRefusedError ? 'register a public https URL' : 'check the host name'
      throw new ApiError('invalid_request', `The webhook URL was refused: ${message}. ${hint[0]!.toUpperCase()}${hint.slice(1)}.`, { details: [{ field: 'url', issue: message }] })
    }
  }

  /** One outbox row per enabled endpoint of the note's library that asked for `type`. */
  async function enqueue(e: { accountId: string; sandbox: boolean }, type: WebhookEvent, payload: (at: string) => WebhookPayload): Promise<void> {
    const hooks = (await repo.enabled({ accountId: e.accountId, sandbox: e.sandbox })).filter(h => (JSON.parse(h.events) as string[]).includes(type))
    if (!hooks.length) return
    const at = clock.now().toISOString()
    const text = JSON.stringify(payload(at))
    for (const h of hooks) await repo.enqueue({ id: ids.next('msg'), webhook_id: h.id, event_type: type, payload: text, created_at: at })
  }

  const service = {
    /** An endpoint of the library; in a team, it names the member who made it (ended with their membership). */
    async create(lib: Library & Partial<Pick<Principal, 'actorId'>>, body: CreateWebhookRequest): Promise<CreatedWebhook> {
      await checkUrl(body.url)
      const row: WebhookRow = {
        id: ids.next('whk'),
        account_id: lib.accountId,
        sandbox: lib.sandbox ? 1 : 0,
        url: body.url,
        events: JSON.stringify(body.events),
        description: body.description ?? null,
        secret: newSecret(),
        disabled_at: null,
        disabled_reason: null,
        created_at: clock.now().toISOString(),
        made_by: madeBy(lib),
      }
      const { inserted, had } = await repo.insertUnder(row, maxPerAccount)
      if (!inserted) {
        throw new ApiError('conflict', `This account already has ${had} webhook endpoints, the most one account may register on this server (live and sandbox together: a live key lists the live ones, a sandbox key the sandbox ones). Delete one it no longer needs (GET /v1/webhooks, then DELETE /v1/webhooks/{id}), or send several events to one endpoint, then register again; the server's operator can raise the limit (NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT).`)
      }
      return { ...toWebhook(row), secret: row.secret }
    },
    list: async (lib: Library) => ({ data: (await repo.list(lib)).map(toWebhook) }),
    async delete(lib: Library, id: string): Promise<void> {
      if (!(await repo.delete(lib, id))) throw notFound(id)
    },
    async deliveries(lib: Library, id: string) {
      await requireWebhook(lib, id)
      const since = iso(clock.now().getTime() - KEEP_DELIVERIES_MS)
      return { data: (await repo.deliveries(id, since, DELIVERIES_SHOWN)).map(toDelivery) }
    },

    /**
     * A note reached its final state: one outbox row per endpoint of its library (live or sandbox)
     * that wants the event. Called inside the transaction that writes the state, so both commit or
     * neither does.
     */
    async noteSettled(e: NoteSettled): Promise<void> {
      const type = e.status === 'Done' ? 'note.completed' : 'note.failed'
      await enqueue(e, type, at => ({ type, timestamp: at, data: { noteId: e.noteId, status: e.status, errorCode: e.status === 'Error' ? (e.errorCode ?? 'internal') : null, ...(e.speakers?.length ? { speakers: e.speakers } : {}), ...tagsOf(e.tags) } }))
    },

    /**
     * A note's transcript edited (every change: its words, split, merge, reassign, replace, restore,
     * a speaker named or merged): `note.updated` to each endpoint of its library that wants it. Called
     * inside the edit's transaction, so the event is queued only with the edit it reports.
     */
    async noteUpdated(e: NoteUpdated): Promise<void> {
      await enqueue(e, 'note.updated', at => ({ type: 'note.updated', timestamp: at, data: { id: e.noteId, noteId: e.noteId, version: e.version, change: e.change, segments: e.segments, ...tagsOf(e.tags) } }))
    },

    /** The outbox row of each event sent to an endpoint (for tests and diagnostics). */
    outboxOf: (webhookId: string) => repo.outboxOf(webhookId),
    /** the outbox now, for the metrics: events queued and under way, and when the oldest due one became due */
    outboxDepth: (at: string) => repo.outbox.depth(at),

    /** Claims due events into this process's free slots and waits for the attempts (webhooks/sender.ts). */
    deliverDue: sender.deliverDue,
    /** Starts this process's sender (webhooks/sender.ts). */
    start: sender.start,
    /** Stops the sender, after the attempts under way end (each within its timeout). */
    stop: sender.stop,
  }
  return service
}
