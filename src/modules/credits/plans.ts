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

/**
 * What a workspace's plan grants it a month. A team workspace on the free plan has no grant of its own
 * (docs/decisions.md "Workspaces"): its pooled credits are what the operator adds (or the pro plan's
 * grant), or any person could make themselves a free grant a month per team they create.
 */
export function monthlyGrantOf(plan: Plan, kind: 'person' | 'team' | undefined): number {
  return kind === 'team' && plan === 'free' ? 0 : PLANS[plan].monthlyGrant
}
