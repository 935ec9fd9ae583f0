import { Elysia } from 'elysia'
import { queryValidator } from '../../http/schemas'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documentedWithQuery } from '../../http/openapi'
import { Usage, UsageQuery } from './model'
import type { UsageService } from './service'

const usageQuery = queryValidator(UsageQuery)

export function usageRoutes(deps: { guard: ReturnType<typeof authGuard>; usage: UsageService }) {
  return new Elysia({ name: 'usage-routes' })
    .use(deps.guard)
    .get('/v1/usage', ({ principal, query }) => deps.usage.usage(requirePrincipal(principal).accountId, usageQuery(query).limit ?? 50), {
      ...documentedWithQuery('getUsage', [], { 200: Usage }, UsageQuery),
    })
}
