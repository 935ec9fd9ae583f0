import { t } from 'elysia'
import { DateTime, Nullable, QueryInteger } from '../../http/schemas'

export const UsageQuery = t.Object({
  limit: t.Optional(QueryInteger({ minimum: 1, maximum: 100, default: 50, error: 'must be a whole number from 1 to 100' })),
})

export const Usage = t.Object(
  {
    balance: t.Object({
      plan: t.Union([t.Literal('free'), t.Literal('pro')]),
      grantTotal: t.Integer(),
      grantRemaining: t.Integer(),
      purchasedRemaining: t.Integer(),
      totalRemaining: t.Integer(),
      grantResetsAt: DateTime,
    }),
    spentThisPeriod: t.Integer(),
    recent: t.Array(t.Object({
      id: t.String(),
      operation: t.String(),
      credits: t.Integer({ description: 'credits taken; negative for a refund or a top-up (credits given back or added)' }),
      source: t.Union([t.Literal('api_key'), t.Literal('oauth'), t.Literal('mcp')]),
      noteId: Nullable(t.String()),
      createdAt: DateTime,
    })),
    costs: t.Record(t.String(), t.Integer()),
    topUp: t.Record(t.String(), t.Unknown()),
  },
  { title: 'Usage' },
)
