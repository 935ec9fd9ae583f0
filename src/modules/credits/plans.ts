/**
 * The plans and what each grants a month: the one table of plans. A file of its own, importing
 * nothing, so the response schemas can name the plans without an import cycle through the contracts.
 */
export const PLANS = {
  free: { monthlyGrant: 60 },
  pro: { monthlyGrant: 2000 },
} as const

export type Plan = keyof typeof PLANS

export function isPlan(value: string): value is Plan {
  return Object.hasOwn(PLANS, value)
}
