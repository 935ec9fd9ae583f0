import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { ApiError } from '../../http/errors'
import type { CredentialSource } from '../../http/admission'
import type { OperationTable } from '../../http/contract'
import { grantPeriod, grantPeriodStart, nextGrantReset, priceList, TOP_UP_OPERATION, type Plan } from './model'
import { monthlyGrantOf } from './plans'
import type { BalanceRow, CreditsRepo, UsageRow } from './repo'

export interface Balance {
  plan: Plan
  grantTotal: number
  grantRemaining: number
  purchasedRemaining: number
  totalRemaining: number
  grantResetsAt: string
}

/** One entry of the usage history as clients see it. */
export interface UsageEntry {
  id: string
  operation: string
  credits: number
  source: CredentialSource
  noteId: string | null
  createdAt: string
}

/**
 * A usage row as an entry: `credits` is what the entry took from the balance, negative when credits
 * came back (a refund) or were added (a top-up, shown as minus the prepaid credits it added). Rows
 * written by the operator's command line show as `api_key`, the interface's only fitting source.
 */
function usageEntry(r: UsageRow): UsageEntry {
  return {
    id: r.id,
    operation: r.operation,
    credits: r.operation === TOP_UP_OPERATION ? r.purchased_credits : r.credits,
    source: r.source === 'cli' ? 'api_key' : r.source,
    noteId: r.note_id,
    createdAt: r.created_at,
  }
}

export type CreditsService = ReturnType<typeof createCreditsService>

/**
 * The credit ledger: monthly grants by plan (reset lazily when a new month is first seen), prepaid
 * credits, grant-first charging, refunds and top-ups. Every read-then-write of a balance is one
 * transaction that reads the balance locked (SQLite: BEGIN IMMEDIATE; PostgreSQL: SELECT … FOR UPDATE)
 * and also writes its usage row, so concurrent requests, on one node or several, cannot overspend and
 * the balance always matches the ledger.
 */
/** Who pays for an operation: an account's live or sandbox library. */
export interface Payer {
  accountId: string
  sandbox: boolean
}

/**
 * `metering: false` (NOTESVC_METERING=off, for single-user installs): every operation is quoted at 0
 * credits, so charges still write their usage rows, with 0, and no balance ever answers 402.
 */
export function createCreditsService(deps: { repo: CreditsRepo; clock: Clock; ids: IdGenerator; topUpCommand: string; operations: Pick<OperationTable, 'byId'>; metering?: boolean }) {
  const { repo, clock, ids } = deps
  const prices = priceList(deps.operations)

  /** The account's balance columns, with the grant counter of an earlier month read as unused. */
  async function current(accountId: string, at: Date, lock = false): Promise<BalanceRow> {
    const row = await repo.balance(accountId, { lock })
    if (!row) throw new ApiError('invalid_token', 'The account of this credential no longer exists.')
    return row.grant_period === grantPeriod(at) ? row : { ...row, grant_period: grantPeriod(at), grant_used: 0 }
  }

  function view(b: BalanceRow, at: Date): Balance {
    const grantTotal = monthlyGrantOf(b.plan, b.kind)
    const grantRemaining = Math.max(0, grantTotal - b.grant_used)
    return {
      plan: b.plan,
      grantTotal,
      grantRemaining,
      purchasedRemaining: b.purchased_credits,
      totalRemaining: grantRemaining + b.purchased_credits,
      grantResetsAt: nextGrantReset(at).toISOString(),
    }
  }

  async function balance(accountId: string, at = clock.now()): Promise<Balance> {
    return view(await current(accountId, at), at)
  }

  /** The one 402: what the operation needs, what remains, when the grant resets, how to add credits. */
  function refuseUnlessCovered(operation: string, credits: number, b: Balance) {
    if (b.totalRemaining >= credits) return
    throw new ApiError('insufficient_credits', `${operation} needs ${credits} credit${credits === 1 ? '' : 's'} but ${b.totalRemaining} remain. The grant resets at ${b.grantResetsAt}; ${deps.topUpCommand}`)
  }

  return {
    balance,

    /** What `operationId` costs, from its declared price (per started minute of `durationSeconds` where it says so). */
    cost: prices.creditsFor,

    /**
     * What `payer` is charged for `operationId`: its price, or nothing for a sandbox library, whose
     * keys answer every processing route with fixed sample output (DECISIONS.md "Sandbox"), and
     * nothing for anyone when metering is off.
     */
    quote: (payer: Payer, operationId: string, durationSeconds: number | null = null): number =>
      payer.sandbox || deps.metering === false ? 0 : prices.creditsFor(operationId, durationSeconds),

    /** The cost table `getUsage` and `GET /v1` publish. */
    publishedCosts: prices.publishedCosts,

    /** 402 before any work when the balance does not cover `credits`; changes nothing. */
    async ensureCovers(accountId: string, operation: string, credits: number): Promise<void> {
      refuseUnlessCovered(operation, credits, await balance(accountId))
    },

    /** Takes `credits` (grant first, then prepaid) and records the charge, or throws 402 and changes nothing. */
    /** `accountId`: the workspace whose pooled balance pays; `actorId`: the person who spent (`actorOf(principal)`) */
    async charge(opts: { accountId: string; operation: string; credits: number; source: CredentialSource; noteId?: string | null; actorId?: string | null }): Promise<{ usageId: string; balance: Balance }> {
      return repo.transaction(async () => {
        const at = clock.now()
        const b = await current(opts.accountId, at, true)
        const before = view(b, at)
        refuseUnlessCovered(opts.operation, opts.credits, before)
        const fromGrant = Math.min(before.grantRemaining, opts.credits)
        const fromPurchased = opts.credits - fromGrant
        await repo.setBalance(opts.accountId, { grant_period: b.grant_period, grant_used: b.grant_used + fromGrant, purchased_credits: b.purchased_credits - fromPurchased })
        const usageId = ids.next('use')
        await repo.insert({ id: usageId, account_id: opts.accountId, operation: opts.operation, credits: opts.credits, grant_credits: fromGrant, purchased_credits: fromPurchased, source: opts.source, note_id: opts.noteId ?? null, created_at: at.toISOString(), actor_id: opts.actorId ?? null })
        return { usageId, balance: await balance(opts.accountId, at) }
      })
    },

    /**
     * Gives back what a charge took, once: grant credits to this month's grant (if the charge was made
     * this month; a new month's grant is already full), prepaid credits to the prepaid balance.
     */
    async refund(usageId: string): Promise<{ refunded: number }> {
      return repo.transaction(async () => {
        const charge = await repo.get(usageId)
        if (!charge || charge.credits <= 0) return { refunded: 0 }
        const at = clock.now()
        // The balance is locked before the refund is looked for: a second refund of the same charge
        // (on another node) waits here, then finds the first.
        const b = await current(charge.account_id, at, true)
        if (await repo.refundOf(usageId)) return { refunded: 0 }
        const grantBack = charge.created_at.slice(0, 7) === b.grant_period ? Math.min(charge.grant_credits, b.grant_used) : 0
        await repo.setBalance(charge.account_id, { grant_period: b.grant_period, grant_used: b.grant_used - grantBack, purchased_credits: b.purchased_credits + charge.purchased_credits })
        await repo.insert({
          id: ids.next('use'), account_id: charge.account_id, operation: `refund:${charge.operation}`, credits: -charge.credits,
          grant_credits: -grantBack, purchased_credits: -charge.purchased_credits, source: charge.source, note_id: charge.note_id,
          created_at: at.toISOString(), refund_of: usageId, actor_id: charge.actor_id ?? null,
        })
        return { refunded: charge.credits }
      })
    },

    /**
     * Adds prepaid credits and records them as a `topUp` usage row: nothing spent (`credits` 0, so
     * spending totals stay sums of charges and refunds), `purchased_credits` minus the credits added.
     */
    async topUp(opts: { accountId: string; credits: number; source: UsageRow['source'] }): Promise<{ usageId: string; balance: Balance }> {
      if (!Number.isInteger(opts.credits) || opts.credits <= 0) throw new RangeError(`a top-up adds a positive whole number of credits, not ${opts.credits}`)
      return repo.transaction(async () => {
        const at = clock.now()
        const b = await current(opts.accountId, at, true)
        await repo.setBalance(opts.accountId, { grant_period: b.grant_period, grant_used: b.grant_used, purchased_credits: b.purchased_credits + opts.credits })
        const usageId = ids.next('use')
        await repo.insert({ id: usageId, account_id: opts.accountId, operation: TOP_UP_OPERATION, credits: 0, grant_credits: 0, purchased_credits: -opts.credits, source: opts.source, note_id: null, created_at: at.toISOString() })
        return { usageId, balance: await balance(opts.accountId, at) }
      })
    },

    /** The latest charges and refunds, newest first (top-ups are not charges). */
    recentCharges: async (accountId: string, limit: number): Promise<UsageEntry[]> => (await repo.recentCharges(accountId, limit)).map(usageEntry),

    /** Credits spent since the start of the grant period `at` falls in, refunds deducted. */
    spentThisPeriod: (accountId: string, at = clock.now()): Promise<number> => repo.spentSince(accountId, grantPeriodStart(at).toISOString()),

    /** How an account gets prepaid credits on this instance (the `topUp` object of `getUsage`). */
    topUpOffer(): Record<string, string> {
      return {
        method: 'operator',
        description: 'Prepaid credits are added by the operator of this instance; they never expire and are spent after the monthly grant.',
        command: deps.topUpCommand,
      }
    },
  }
}
