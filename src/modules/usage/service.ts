import type { Clock } from '../../clock'
import type { IdGenerator } from '../../ids'
import { ApiError } from '../../http/errors'
import type { CredentialSource } from '../../http/auth'
import { COSTS } from './model'
import type { BalanceRow, UsageRepo } from './repo'

export const PLAN_GRANTS = { free: 60, pro: 2000 } as const

export interface Balance {
  plan: 'free' | 'pro'
  grantTotal: number
  grantRemaining: number
  purchasedRemaining: number
  totalRemaining: number
  grantResetsAt: string
}

function period(at: Date): string {
  return at.toISOString().slice(0, 7)
}

/** 00:00 UTC on the first day of the month after `at`. */
export function nextGrantReset(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
}

/** One credit per started minute, at least one (DECISIONS.md "Uploads on disk storage"). */
export function creditsForDuration(seconds: number | null): number {
  return seconds === null ? 1 : Math.max(1, Math.ceil(seconds / 60))
}

export type UsageService = ReturnType<typeof createUsageService>

/**
 * The credit ledger: monthly grants (reset lazily when a new month is first seen), prepaid credits,
 * grant-first charging. Every check-and-charge is one immediate transaction, so concurrent requests
 * cannot overspend.
 */
export function createUsageService(deps: { repo: UsageRepo; clock: Clock; ids: IdGenerator; topUpCommand: string }) {
  const { repo, clock, ids } = deps

  function current(row: BalanceRow, at: Date): BalanceRow {
    return row.grant_period === period(at) ? row : { ...row, grant_period: period(at), grant_used: 0 }
  }

  function balanceOf(accountId: string, at = clock.now()): Balance {
    const row = repo.balance(accountId)
    if (!row) throw new ApiError('invalid_token', 'The account of this credential no longer exists.')
    const b = current(row, at)
    const grantTotal = PLAN_GRANTS[b.plan]
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

  return {
    balance: balanceOf,

    /** Takes `credits` (grant first, then prepaid) or throws 402 and changes nothing. */
    charge(opts: { accountId: string; operation: string; credits: number; source: CredentialSource; noteId?: string | null }): { usageId: string; balance: Balance } {
      return repo.transaction(() => {
        const at = clock.now()
        const row = repo.balance(opts.accountId)
        if (!row) throw new ApiError('invalid_token', 'The account of this credential no longer exists.')
        const b = current(row, at)
        const grantLeft = Math.max(0, PLAN_GRANTS[b.plan] - b.grant_used)
        if (grantLeft + b.purchased_credits < opts.credits) {
          throw new ApiError('insufficient_credits', `${opts.operation} needs ${opts.credits} credit${opts.credits === 1 ? '' : 's'} but ${grantLeft + b.purchased_credits} remain. The grant resets at ${nextGrantReset(at).toISOString()}; ${deps.topUpCommand}`)
        }
        const fromGrant = Math.min(grantLeft, opts.credits)
        const fromPurchased = opts.credits - fromGrant
        repo.setBalance(opts.accountId, { grant_period: b.grant_period, grant_used: b.grant_used + fromGrant, purchased_credits: b.purchased_credits - fromPurchased })
        const usageId = ids.next('use')
        repo.insert({ id: usageId, account_id: opts.accountId, operation: opts.operation, credits: opts.credits, grant_credits: fromGrant, purchased_credits: fromPurchased, source: opts.source, note_id: opts.noteId ?? null, created_at: at.toISOString() })
        return { usageId, balance: balanceOf(opts.accountId, at) }
      })
    },

    /**
     * Gives back what a charge took, once: grant credits to this month's grant (if the charge was made
     * this month; a new month's grant is already full), prepaid credits to the prepaid balance.
     */
    refund(usageId: string): { refunded: number } {
      return repo.transaction(() => {
        const charge = repo.get(usageId)
        if (!charge || charge.credits <= 0 || repo.refundOf(usageId)) return { refunded: 0 }
        const at = clock.now()
        const row = repo.balance(charge.account_id)!
        const b = current(row, at)
        const grantBack = charge.created_at.slice(0, 7) === b.grant_period ? Math.min(charge.grant_credits, b.grant_used) : 0
        repo.setBalance(charge.account_id, { grant_period: b.grant_period, grant_used: b.grant_used - grantBack, purchased_credits: b.purchased_credits + charge.purchased_credits })
        repo.insert({
          id: ids.next('use'), account_id: charge.account_id, operation: `refund:${charge.operation}`, credits: -charge.credits,
          grant_credits: -grantBack, purchased_credits: -charge.purchased_credits, source: charge.source, note_id: charge.note_id,
          created_at: at.toISOString(), refund_of: usageId,
        })
        return { refunded: charge.credits }
      })
    },

    usage(accountId: string, limit: number) {
      const at = clock.now()
      const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)).toISOString()
      return {
        balance: balanceOf(accountId, at),
        spentThisPeriod: repo.spentSince(accountId, monthStart),
        recent: repo.recent(accountId, limit).map(r => ({
          id: r.id,
          operation: r.operation,
          credits: r.credits,
          source: (r.source === 'cli' ? 'api_key' : r.source) as 'api_key' | 'oauth' | 'mcp',
          noteId: r.note_id,
          createdAt: r.created_at,
        })),
        costs: { ...COSTS },
        topUp: {
          method: 'operator',
          description: 'Prepaid credits are added by the operator of this instance; they never expire and are spent after the monthly grant.',
          command: deps.topUpCommand,
        },
      }
    },
  }
}
