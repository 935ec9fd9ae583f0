import { operation } from '../../http/operations'

export { isPlan, PLANS, type Plan } from './plans'

/** What an operation costs: a flat number of credits, or a number per started minute of media. */
export type Price = { flat: number } | { perStartedMinute: number }

/**
 * The price an operation declares in the operations table. This is the only place that reads that
 * table's `credits` field; point it elsewhere if the declaration moves.
 */
export function declaredPrice(operationId: string): Price {
  const credits = operation(operationId).credits
  return typeof credits === 'number' ? { flat: credits } : { perStartedMinute: Number.parseInt(credits, 10) }
}

/**
 * The credits an operation takes: its flat price, or its rate per started minute of `durationSeconds`
 * with at least one minute. Without a duration (not yet known, or unreadable) that is one minute's
 * worth, the least such an operation can cost.
 */
export function creditsFor(operationId: string, durationSeconds: number | null = null): number {
  const price = declaredPrice(operationId)
  if ('flat' in price) return price.flat
  const minutes = durationSeconds === null ? 1 : Math.max(1, Math.ceil(durationSeconds / 60))
  return minutes * price.perStartedMinute
}

/**
 * A flat price for documents that the published cost table names; no operation of this service takes
 * documents yet, so it has no row in the operations table to be read from.
 */
const DOCUMENT_FLAT = 2

function rate(operationId: string): number {
  const price = declaredPrice(operationId)
  return 'flat' in price ? price.flat : price.perStartedMinute
}

/** The cost table `getUsage` and `GET /v1` publish, under the names the interface gives them. */
export function publishedCosts(): Record<string, number> {
  return {
    transcriptionPerMinute: rate('createTranscription'),
    youtubePerMinute: rate('createYoutubeSummary'),
    summarizeText: rate('createSummary'),
    askQuestion: rate('askNoteQuestion'),
    documentFlat: DOCUMENT_FLAT,
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
