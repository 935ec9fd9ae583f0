import { Webhook as StandardWebhook } from 'standardwebhooks'
import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Logger } from '../../log'
import { DEFAULT_MAX_TAKEOVERS, leaseOf, nextAttemptAt, LeaseLostError, type RetryPolicy } from '../../jobs/queue'
import { requestPinned, UrlRefusedError, vetUrl, type LookupFn } from '../../net/outbound'
import type { DeliveryRow, OutboxRow, WebhookRow, WebhooksRepo } from './repo'

const USER_AGENT = 'notesvc-webhooks/1 (+Standard Webhooks)'

/** What one attempt came to. */
export interface Outcome {
  outcome: DeliveryRow['outcome']
  status: number | null
  error: string | null
}

/** The outbound URL rules of webhook endpoints (those of `audioUrl`). */
interface UrlPolicy {
  allowPrivate: boolean
  lookup?: LookupFn
}

/** One attempt: checked again (DNS included), signed, POSTed to the vetted address, redirects not followed. */
export function createDeliveryAttempt(deps: { clock: Clock; policy: UrlPolicy; timeoutMs: number }) {
  const { clock, policy, timeoutMs } = deps
  return async function attempt(hook: WebhookRow, row: OutboxRow): Promise<Outcome> {
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
}

/**
 * One claimed outbox row delivered: the attempt made, then recorded with the row's next state (done,
 * retried on the schedule, or given up), under the row's lease.
 */
export function createDeliverer(deps: {
  repo: WebhooksRepo
  clock: Clock
  ids: IdGenerator
  log: Logger
  retries: RetryPolicy
  /** the retry policy of sandbox endpoints (default: `retries`) */
  sandboxRetries?: RetryPolicy
  /** the reason a sandbox endpoint's first attempt of an event is recorded as failed though it was taken (a sandbox scenario), or null */
  failsFirstAttempt?: (row: OutboxRow) => Promise<string | null>
  attempt: (hook: WebhookRow, row: OutboxRow) => Promise<Outcome>
  onDelivery?: (outcome: DeliveryRow['outcome']) => void
  /** told when a retry this process set comes due */
  wakeAt: (dueMs: number) => void
}) {
  const { repo, clock, ids, log, retries, wakeAt } = deps
  const { outbox } = repo
  const iso = (ms: number) => new Date(ms).toISOString()

  /** Delivers one claimed row and records the attempt with the row's next state. */
  return async function deliver(row: OutboxRow): Promise<void> {
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
    const sandbox = Number(hook.sandbox) === 1
    let result = await deps.attempt(hook, row)
    if (sandbox && result.outcome === 'delivered' && row.attempts === 1 && deps.failsFirstAttempt) {
      const reason = await deps.failsFirstAttempt(row)
      if (reason) result = { outcome: 'failed', status: result.status, error: reason }
    }
    deps.onDelivery?.(result.outcome)
    const at = clock.now()
    const log_: DeliveryRow = {
      id: ids.next('whd'), webhook_id: hook.id, message_id: row.id, event_type: row.event_type, attempt: row.attempts, attempted_at: attemptedAt,
      outcome: result.outcome, response_status: result.status, error: result.error, duration_ms: Math.round(performance.now() - started),
    }
    const record = () => repo.logAttempt(log_)
    const due = result.outcome === 'failed' || result.outcome === 'refused'
      ? nextAttemptAt(sandbox ? (deps.sandboxRetries ?? retries) : retries, row.attempts, Date.parse(row.first_attempt_at ?? attemptedAt), at.getTime())
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
}
