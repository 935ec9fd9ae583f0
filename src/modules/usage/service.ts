import type { Clock } from '../../clock'
import type { CreditsService } from '../credits/service'
import { usageEntry } from '../credits/service'
import { grantPeriodStart, publishedCosts } from '../credits/model'
import type { UsageRepo } from './repo'

export type { Balance } from '../credits/service'

export type UsageService = ReturnType<typeof createUsageService>

/** The usage report (`getUsage`): the balance, spending this grant period, recent entries, costs, top-up. */
export function createUsageService(deps: { credits: CreditsService; repo: UsageRepo; clock: Clock }) {
  const { credits, repo, clock } = deps
  return {
    // The ledger is the credits service's; these are its own functions, for callers that know it as usage.
    balance: credits.balance,
    charge: credits.charge,
    refund: credits.refund,

    usage(accountId: string, limit: number) {
      const at = clock.now()
      return {
        balance: credits.balance(accountId, at),
        spentThisPeriod: repo.spentSince(accountId, grantPeriodStart(at).toISOString()),
        recent: repo.recent(accountId, limit).map(usageEntry),
        costs: publishedCosts(),
        topUp: credits.topUpOffer(),
      }
    },
  }
}
