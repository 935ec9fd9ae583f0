import type { OperationTable } from '../../http/contract'

export { isPlan, PLANS, type Plan } from './plans'

/** What an operation costs: a flat number of credits, or a number per started minute of media. */
export type Price = { flat: number } | { perStartedMinute: number }

/**
 * A flat price for documents that the published cost table names; no operation of this service takes
 * documents yet, so it has no row in the operations table to be read from.
 */
const DOCUMENT_FLAT = 2

/**
 * Prices read from the operations table (`src/operations.ts`, handed in by the composition root): the
 * only place that reads its `credits` field.
 */
export function priceList(operations: Pick<OperationTable, 'byId'>) {
  /** The price an operation declares. */
  function declaredPrice(operationId: string): Price {
    const credits = operations.byId(operationId).credits
    return typeof credits === 'number' ? { flat: credits } : { perStartedMinute: Number.parseInt(credits, 10) }
  }

  function rate(operationId: string): number {
    const price = declaredPrice(operationId)
    return 'flat' in price ? price.flat : price.perStartedMinute
  }

  return {
    /**
     * The credits an operation takes: its flat price, or its rate per started minute of
     * `durationSeconds` with at least one minute. Without a duration (not yet known, or unreadable)
     * that is one minute's worth, the least such an operation can cost.
     */
    creditsFor(operationId: string, durationSeconds: number | null = null): number {
      const price = declaredPrice(operationId)
      if ('flat' in price) return price.flat
      const minutes = durationSeconds === null ? 1 : Math.max(1, Math.ceil(durationSeconds / 60))
      return minutes * price.perStartedMinute
    },

    /** The cost table `getUsage` and `GET /v1` publish, under the names the interface gives them. */
    publishedCosts(): Record<string, number> {
      return {
        transcriptionPerMinute: rate('createTranscription'),
        youtubePerMinute: rate('createYoutubeSummary'),
        summarizeText: rate('createSummary'),
        askQuestion: rate('askNoteQuestion'),
        documentFlat: DOCUMENT_FLAT,
      }
    },
  }
}

/** The operation name of a usage row that records prepaid credits added to an account. */
export const TOP_UP_OPERATION = 'topUp'

/** The 'YYYY-MM' calendar month (UTC) a grant counter belongs to. */
export function grantPeriod(at: Date): string {
  return at.toISOString().slice(0, 7)
}

/** 00:00 UTC on the first day of the month of `at`: where this grant period began. */
export function grantPeriodStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
}

/** 00:00 UTC on the first day of the month after `at`. */
export function nextGrantReset(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
}
