import { t } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'
import { PLANS, type Plan } from '../credits/plans'

export const UsageQuery = t.Object({
  limit: t.Optional(Integer({ minimum: 1, maximum: 100, default: 50, error: 'must be a whole number from 1 to 100' })),
})

export const Usage = t.Object(
  {
    balance: t.Object({
      plan: t.Union(Object.keys(PLANS).map(p => t.Literal(p as Plan))),
      grantTotal: Integer(),
      grantRemaining: Integer(),
      purchasedRemaining: Integer(),
      totalRemaining: Integer(),
      grantResetsAt: DateTime,
    }, { title: 'UsageBalance', description: 'The credits left: the monthly grant first, then prepaid credits.' }),
    spentThisPeriod: Integer(),
    recent: t.Array(t.Object({
      id: t.String(),
      operation: t.String(),
      credits: Integer({ description: 'credits taken; negative for a refund or a top-up (credits given back or added)' }),
      source: t.Union([t.Literal('api_key'), t.Literal('oauth'), t.Literal('mcp')]),
      noteId: Nullable(t.String()),
      createdAt: DateTime,
    }, { title: 'UsageRecord', description: 'One charge or refund.' })),
    costs: t.Record(t.String(), Integer(), { description: 'cost per operation' }),
    topUp: t.Record(t.String(), t.Unknown()),
  },
  { title: 'Usage', description: 'The credit balance, what this period spent, the recent charges and the cost table.' },
)
