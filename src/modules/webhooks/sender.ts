import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import type { Logger } from '../../log'
import type { RetryPolicy } from '../../jobs/queue'
import { createDeliverer, type Outcome } from './delivery'
import type { DeliveryRow, OutboxRow, WebhookRow, WebhooksRepo } from './repo'

/**
 * When a failed delivery is tried again, after each attempt (the last delay repeats), until a day has
 * passed since the first attempt: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h.
 */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000]
export const GIVE_UP_AFTER_MS = 24 * 3_600_000
/**
 * The schedule of sandbox endpoints: 1 s, 2 s, then the one above (5 s, 30 s, …), so a client's tests
 * see a retry within seconds (docs/decisions.md "Sandbox scenarios").
 */
export const SANDBOX_RETRY_DELAYS_MS = [1_000, 2_000, ...RETRY_DELAYS_MS]
/** The retry policy of webhook events (jobs/queue.ts `RetryPolicy`): the schedule above, for a day. */
export const WEBHOOK_RETRIES: RetryPolicy = { delaysMs: RETRY_DELAYS_MS, maxAttempts: Number.POSITIVE_INFINITY, giveUpAfterMs: GIVE_UP_AFTER_MS }
/** A receiver must answer within this, DNS and connection included. */
export const DELIVERY_TIMEOUT_MS = 10_000
/** How long a claimed row stays with its sender before another may take it (longer than one attempt). */
export const DELIVERY_LEASE_MS = 60_000
/** Attempts, and finished events, are kept this long. */
export const KEEP_DELIVERIES_MS = 30 * 24 * 3_600_000
/**
 * Deliveries one sender process has under way at once. A slot that frees takes the next due event at
 * once. A slot waiting on a receiver costs an open socket and a timer, so there are many: with one
 * delivery per endpoint and 8 per account (repo.ts `IN_FLIGHT_LIMITS`), 31 accounts whose receivers
 * all hang still leave room for everyone else. (With 32 slots, four such accounts, 96 endpoints,
 * filled them all and another account's event waited 20 to 50 s: bench/hostile.ts.)
 */
export const SENDER_SLOTS = 256
/** A retry due sooner than this wakes the sender when it is due; later ones are found by the poll. */
const RETRY_WAKE_WITHIN_MS = 60_000

/**
 * What wakes an idle sender before its next poll: a nudge (a slot freed) or a retry it set coming due.
 */
function createSenderAlarm(clock: Clock) {
  /** set when the sender should look again at once (a slot freed, a retry came due) */
  let nudged = false
  let wake: (() => void) | null = null
  const nudge = () => {
    nudged = true
    wake?.()
  }
  return {
    nudge,
    /** forgets past nudges: the sender is about to look */
    rearm: () => {
      nudged = false
    },
    /** Wakes the sender when a retry this process set comes due (the poll finds later ones). */
    wakeAt(dueMs: number): void {
      const inMs = dueMs - clock.now().getTime()
      if (inMs < RETRY_WAKE_WITHIN_MS) setTimeout(nudge, Math.max(0, inMs)).unref?.()
    },
    /** Until `ms` pass, the sender is nudged, or it is stopped. */
    pause(ms: number, signal: AbortSignal): Promise<void> {
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
    },
  }
}

/**
 * The sender of one process: a loop that fills its slots with due outbox rows (claimed under a lease)
 * and runs each delivery (delivery.ts) in a slot of its own; old attempts are pruned hourly.
 */
export function createWebhookSender(deps: {
  repo: WebhooksRepo
  clock: Clock
  ids: IdGenerator
  log: Logger
  retries: RetryPolicy
  /** the retry policy of sandbox endpoints */
  sandboxRetries?: RetryPolicy
  /** the reason a sandbox endpoint's first attempt of an event is recorded as failed though it was taken (a sandbox scenario), or null */
  failsFirstAttempt?: (row: OutboxRow) => Promise<string | null>
  leaseMs: number
  slots: number
  /** how often an idle sender looks for due events */
  pollMs: number
  attempt: (hook: WebhookRow, row: OutboxRow) => Promise<Outcome>
  onDelivery?: (outcome: DeliveryRow['outcome']) => void
}) {
  const { repo, clock, log, leaseMs, slots } = deps
  const { outbox } = repo
  const iso = (ms: number) => new Date(ms).toISOString()
  const deliver = createDeliverer({ ...deps, wakeAt: (dueMs: number) => alarm.wakeAt(dueMs) })

  /**
   * The sender's slots: the attempts under way in this process. Each claimed event runs in a slot of
   * its own; when it ends (its result recorded), the slot frees and the sender is woken to fill it.
   */
  const underWay = new Set<Promise<void>>()
  const alarm = createSenderAlarm(clock)
  const { nudge } = alarm

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

  let stopping: AbortController | null = null
  let loop: Promise<void> | null = null
  let lastPrune = 0

  return {
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

    /**
     * Starts this process's sender: its free slots are filled with due events whenever one frees, a
     * retry it set comes due, or `pollMs` passes.
     */
    start(owner: string): void {
      if (loop) return
      const stop = (stopping = new AbortController())
      loop = (async () => {
        while (!stop.signal.aborted) {
          alarm.rearm()
          try {
            await fill(owner)
            if (Date.now() - lastPrune > 3_600_000) {
              lastPrune = Date.now()
              await repo.prune(iso(clock.now().getTime() - KEEP_DELIVERIES_MS))
            }
          } catch (err) {
            log.warn('could not look for webhook events to send; trying again shortly', { error: err })
          }
          await alarm.pause(deps.pollMs, stop.signal)
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
}
