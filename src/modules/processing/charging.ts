import type { Principal } from '../../http/admission'
import { actorOf } from '../../http/principal'
import type { CreditsService } from '../credits/service'

/** A charging response: the body and the balance for `X-Credits-Remaining`. */
export interface Charged<T> {
  body: T
  creditsRemaining: number
}

/**
 * The charging rule of the synchronous routes: the balance checked before the work (402 early), the
 * charge made only on success, in one transaction that refuses (402) if the balance no longer covers it.
 */
export function createCharging(credits: CreditsService) {
  return {
    /** the balance for `X-Credits-Remaining` when nothing was charged (sandbox keys) */
    remaining: async (p: Principal) => (await credits.balance(p.accountId)).totalRemaining,
    ensureBalance: async (p: Principal, operation: string, cost: number) => {
      await credits.ensureCovers(p.accountId, operation, cost)
    },
    /** charges `cost`; the balance left */
    async charge(p: Principal, operation: string, cost: number, noteId: string | null = null): Promise<number> {
      return (await credits.charge({ accountId: p.accountId, operation, credits: cost, source: p.source, noteId, actorId: actorOf(p) })).balance.totalRemaining
    },
  }
}

export type Charging = ReturnType<typeof createCharging>
