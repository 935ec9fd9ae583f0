import type { Clock } from '../../clock'
import type { CreditsService } from '../credits/service'
import { publishedCosts } from '../credits/model'

export type { Balance } from '../credits/service'

export type UsageService = ReturnType<typeof createUsageService>

/** The usage report (`getUsage`): the balance, spending this grant period, recent charges, costs, top-up. */
export function createUsageService(deps: { credits: CreditsService; clock: Clock }) {
  const { credits, clock } = deps
  return {
    usage(accountId: string, limit: number) {
      const at = clock.now()
      return {
        balance: credits.balance(accountId, at),
        spentThisPeriod: credits.spentThisPeriod(accountId, at),
        recent: credits.recentCharges(accountId, limit),
        costs: publishedCosts(),
        topUp: credits.topUpOffer(),
      }
    },
  }
}
