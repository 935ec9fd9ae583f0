import type { Clock } from '../../clock'
import type { CreditsService } from '../credits/service'

export type { Balance } from '../credits/service'

export type UsageService = ReturnType<typeof createUsageService>

/** The usage report (`getUsage`): the balance, spending this grant period, recent charges, costs, top-up. */
export function createUsageService(deps: { credits: CreditsService; clock: Clock }) {
  const { credits, clock } = deps
  return {
    async usage(accountId: string, limit: number) {
      const at = clock.now()
      return {
        balance: await credits.balance(accountId, at),
        spentThisPeriod: await credits.spentThisPeriod(accountId, at),
        recent: await credits.recentCharges(accountId, limit),
        costs: credits.publishedCosts(),
        topUp: credits.topUpOffer(),
      }
    },
  }
}
