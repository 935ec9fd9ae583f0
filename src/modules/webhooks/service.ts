import { randomBytes } from 'node:crypto'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Logger } from '../../log'
import { ApiError } from '../../http/errors'
import { requestPinned, UrlRefusedError, vetUrl, type LookupFn } from '../../net/outbound'
import type { Library } from '../library'
import type { CreatedWebhook, CreateWebhookRequest, Webhook, WebhookDelivery, WebhookEvent, WebhookPayload } from './model'
import { DEFAULT_MAX_TAKEOVERS, leaseOf, nextAttemptAt, LeaseLostError, type RetryPolicy } from '../../jobs/queue'
import type { DeliveryRow, OutboxRow, WebhookRow, WebhooksRepo } from './repo'

/**
 * When a failed delivery is tried again, after each attempt (the last delay repeats), until a day has
 * passed since the first attempt: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h.
 */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000]
export const GIVE_UP_AFTER_MS = 24 * 3_600_000
/** The retry policy of webhook events (jobs/queue.ts `RetryPolicy`): the schedule above, for a day. */
export const WEBHOOK_RETRIES: RetryPolicy = { delaysMs: RETRY_DELAYS_MS, maxAttempts: Number.POSITIVE_INFINITY, giveUpAfterMs: GIVE_UP_AFTER_MS }
/** A receiver must answer within this, DNS and connection included. */
export const DELIVERY_TIMEOUT_MS = 10_000
/** How long a claimed row stays with its sender before another may take it (longer than one attempt). */
export const DELIVERY_LEASE_MS = 60_000
/** Attempts, and finished events, are kept this long. */
export const KEEP_DELIVERIES_MS = 30 * 24 * 3_600_000
const DELIVERIES_SHOWN = 100
/**
 * Deliveries one sender process has under way at once. A slot that frees takes the next due event at
 * once. A slot waiting on a receiver costs an open socket and a timer, so there are many: with one
 * delivery per endpoint and 8 per account (repo.ts `IN_FLIGHT_LIMITS`), 31 accounts whose receivers
 * all hang still leave room for everyone else. (With 32 slots, four such accounts, 96 endpoints,
 * filled them all and another account's event waited 20 to 50 s: bench/hostile.ts.)
 */
export const SENDER_SLOTS = 256
/** How many endpoints one account may register, live and sandbox together (NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT). */
export const DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT = 25
/** A retry due sooner than this wakes the sender when it is due; later ones are found by the poll. */
const RETRY_WAKE_WITHIN_MS = 60_000
const USER_AGENT = 'notesvc-webhooks/1 (+Standard Webhooks)'

export type WebhooksService = ReturnType<typeof createWebhooksService>

/** The final state of a note, as the notes service reports it inside the transaction that writes it. */
export interface NoteSettled {
  noteId: string
  accountId: string
  sandbox: boolean
  status: 'Done' | 'Error'
  errorCode: string | null
  /** the note's speakers when it was diarized */
  speakers?: { id: string; name: string }[]
}

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

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** What one attempt came to. */
interface Outcome {
  outcome: DeliveryRow['outcome']
  status: number | null
  error: string | null
}

/**
 * Webhook endpoints and the delivery of their events: an outbox row per event and endpoint, written
 * in the transaction of the note's final state (`noteSettled`), sent by a loop in every process that
 * runs workers (`start`), signed with the Standard Webhooks library, retried on a schedule for a day.
 */
export function createWebhooksService(deps: WebhooksDeps) {
  const { repo, clock, ids, log } = deps
  const retries: RetryPolicy = { ...WEBHOOK_RETRIES, delaysMs: deps.retryDelaysMs ?? RETRY_DELAYS_MS, giveUpAfterMs: deps.giveUpAfterMs ?? GIVE_UP_AFTER_MS }
  const { outbox } = repo
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const leaseMs = deps.leaseMs ?? DELIVERY_LEASE_MS
  const slots = deps.slots ?? SENDER_SLOTS
  const maxPerAccount = deps.maxPerAccount ?? DEFAULT_MAX_WEBHOOKS_PER_ACCOUNT
  const policy = { allowPrivate: deps.allowPrivateUrls, lookup: deps.lookup }
  const iso = (ms: number) => new Date(ms).toISOString()

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

  /** One attempt: checked again (DNS included), signed, POSTed to the vetted address, redirects not followed. */
  async function attempt(hook: WebhookRow, row: OutboxRow): Promise<Outcome> {
    const signal = AbortSignal.timeout(timeoutMs)
    let vetted
    try {
      vetted = await vetUrl(hook.url, { ...policy, signal })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      return { outcome: err instanceof UrlRefusedError ? 'refused' : 'failed', status: null, error: message }
    }
    const at = clock.now()
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': row.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(hook.secret).sign(row.id, at, row.payload),
    }
    try {
      const res = await requestPinned(vetted, { signal, method: 'POST', headers, body: row.payload })
      await res.body?.cancel().catch(() => {})
      if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', status: res.status, error: null }
      if (res.status === 410) return { outcome: 'disabled', status: 410, error: 'the endpoint answered 410 Gone; it is disabled and receives nothing more' }
      const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed; register the final URL)' : ''
      return { outcome: 'failed', status: res.status, error: `the endpoint answered ${res.status}${redirect}` }
    } catch (err) {
      if (signal.aborted) return { outcome: 'failed', status: null, error: `no answer within ${timeoutMs / 1000} s` }
      return { outcome: 'failed', status: null, error: err instanceof Error ? err.message : String(err) }
    }
  }

  /** Delivers one claimed row and records the attempt with the row's next state. */
  async function deliver(row: OutboxRow): Promise<void> {
    const lease = leaseOf(row)
    const hook = await repo.byId(row.webhook_id)
    if (!hook) return // deleted since: its outbox rows went with it
    if (hook.disabled_at) {
      await outbox.end(lease, 'failed', `the endpoint was disabled: ${hook.disabled_reason ?? 'by its owner'}`, clock.now().toISOString())
      return
    }
    if (row.takeovers >= DEFAULT_MAX_TAKEOVERS) {
      await outbox.end(lease, 'failed', `its sender died ${row.takeovers} times while delivering it`, clock.now().toISOString())
      log.warn('webhook event given up: its sender died while delivering it, again and again', { messageId: row.id, webhookId: hook.id, takeovers: row.takeovers })
      return
    }
    const started = performance.now()
    const attemptedAt = clock.now().toISOString()
    const result = await attempt(hook, row)
    deps.onDelivery?.(result.outcome)
    const at = clock.now()
    const log_: DeliveryRow = {
      id: ids.next('whd'), webhook_id: hook.id, message_id: row.id, event_type: row.event_type, attempt: row.attempts, attempted_at: attemptedAt,
      outcome: result.outcome, response_status: result.status, error: result.error, duration_ms: Math.round(performance.now() - started),
    }
    const record = () => repo.logAttempt(log_)
    const due = result.outcome === 'failed' || result.outcome === 'refused'
      ? nextAttemptAt(retries, row.attempts, Date.parse(row.first_attempt_at ?? attemptedAt), at.getTime())
      : null
    try {
      if (result.outcome === 'delivered') await outbox.end(lease, 'done', null, at.toISOString(), record)
      else if (result.outcome === 'disabled') {
        await outbox.end(lease, 'failed', result.error, at.toISOString(), async () => {
          await record()
          await repo.disable(hook.id, 'the endpoint answered 410 Gone', at.toISOString())
        })
      } else if (due !== null) {
        if (!(await outbox.retry(lease, iso(due), result.error ?? 'failed', at.toISOString(), record))) throw new LeaseLostError(lease)
        wakeAt(due)
      } else {
        await outbox.end(lease, 'failed', result.error, at.toISOString(), record)
        log.warn('webhook event given up after a day of attempts', { messageId: row.id, webhookId: hook.id, attempts: row.attempts })
      }
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err
      log.warn('webhook delivery no longer held by this sender (its lease ran out); the attempt was not recorded', { messageId: row.id, webhookId: hook.id })
    }
  }

  /**
   * The sender's slots: the attempts under way in this process. Each claimed event runs in a slot of
   * its own; when it ends (its result recorded), the slot frees and the sender is woken to fill it.
   */
  const underWay = new Set<Promise<void>>()
  /** set when the sender should look again at once (a slot freed, a retry came due) */
  let nudged = false
  let wake: (() => void) | null = null
  const nudge = () => {
    nudged = true
    wake?.()
  }
  /** Wakes the sender when a retry this process set comes due (the poll finds later ones). */
  function wakeAt(dueMs: number): void {
    const inMs = dueMs - clock.now().getTime()
    if (inMs < RETRY_WAKE_WITHIN_MS) setTimeout(nudge, Math.max(0, inMs)).unref?.()
  }

  /** Starts a claimed event's attempt in a slot of its own; the slot frees when the attempt is recorded. */
  function launch(row: OutboxRow): Promise<void> {
    const run: Promise<void> = deliver(row)
      .catch(err => log.error('webhook delivery failed to record; it is tried again after its lease', { messageId: row.id, error: err }))
      .finally(() => {
        underWay.delete(run)
        nudge()
      })
    underWay.add(run)
    return run
  }

  /**
   * Fills the free slots with due events, claimed one at a time: the claim skips events of an endpoint
   * (or an account) that already has its most under way (repo.ts `IN_FLIGHT_LIMITS`), so a receiver
   * that hangs delays only its own endpoint. Returns the attempts started.
   */
  async function fill(owner: string): Promise<Promise<void>[]> {
    const started: Promise<void>[] = []
    if (underWay.size >= slots || !(await outbox.anyDue(iso(clock.now().getTime())))) return started
    while (underWay.size < slots) {
      const now = clock.now().getTime()
      const [row] = await outbox.claim(owner, iso(now), iso(now + leaseMs), 1)
      if (!row) break
      started.push(launch(row))
    }
    return started
  }

  /** Until `ms` pass, the sender is nudged, or it is stopped. */
  function pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>(resolve => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        wake = null
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal.addEventListener('abort', done, { once: true })
      wake = done
      if (nudged || signal.aborted) done()
    })
  }

  let stopping: AbortController | null = null
  let loop: Promise<void> | null = null
  let lastPrune = 0

  const service = {
    async create(lib: Library, body: CreateWebhookRequest): Promise<CreatedWebhook> {
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
      }
      const { inserted, had } = await repo.insertUnder(row, maxPerAccount)
      if (!inserted) {
        throw new ApiError('conflict', `This account already has ${had} webhook endpoints, the most one account may register on this server (live and sandbox together: a live key lists the live ones, a sandbox key the sandbox ones). Delete one it no longer needs (GET /v1/webhooks, then DELETE /v1/webhooks/{id}), or send both events to one endpoint, then register again; the server's operator can raise the limit (NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT).`)
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
      const type: WebhookEvent = e.status === 'Done' ? 'note.completed' : 'note.failed'
      const hooks = (await repo.enabled({ accountId: e.accountId, sandbox: e.sandbox })).filter(h => (JSON.parse(h.events) as string[]).includes(type))
      if (!hooks.length) return
      const at = clock.now().toISOString()
      const payload: WebhookPayload = { type, timestamp: at, data: { noteId: e.noteId, status: e.status, errorCode: e.status === 'Error' ? (e.errorCode ?? 'internal') : null, ...(e.speakers?.length ? { speakers: e.speakers } : {}) } }
      const text = JSON.stringify(payload)
      for (const h of hooks) await repo.enqueue({ id: ids.next('msg'), webhook_id: h.id, event_type: type, payload: text, created_at: at })
    },

    /**
     * Claims due events (as `owner`) into this process's free slots and waits for the attempts it
     * started; returns how many. The sender loop does not wait: it fills a slot as soon as one frees.
     * Tests call this with a clock they move.
     */
    async deliverDue(owner: string): Promise<number> {
      const started = await fill(owner)
      await Promise.all(started)
      return started.length
    },

    /** The outbox row of each event sent to an endpoint (for tests and diagnostics). */
    outboxOf: (webhookId: string) => repo.outboxOf(webhookId),
    /** the outbox now, for the metrics: events queued and under way, and when the oldest due one became due */
    outboxDepth: (at: string) => repo.outbox.depth(at),

    /**
     * Starts this process's sender: its free slots are filled with due events whenever one frees, a
     * retry it set comes due, or `pollMs` (default 1 s) passes.
     */
    start(owner: string): void {
      if (loop) return
      const stop = (stopping = new AbortController())
      const pollMs = deps.pollMs ?? 1000
      loop = (async () => {
        while (!stop.signal.aborted) {
          nudged = false
          try {
            await fill(owner)
            if (Date.now() - lastPrune > 3_600_000) {
              lastPrune = Date.now()
              await repo.prune(iso(clock.now().getTime() - KEEP_DELIVERIES_MS))
            }
          } catch (err) {
            log.warn('could not look for webhook events to send; trying again shortly', { error: err })
          }
          await pause(pollMs, stop.signal)
        }
        await Promise.all(underWay)
      })()
    },
    /** Stops the sender, after the attempts under way end (each within its timeout). */
    async stop(): Promise<void> {
      stopping?.abort()
      await loop
      loop = null
      stopping = null
    },
  }
  return service
}
