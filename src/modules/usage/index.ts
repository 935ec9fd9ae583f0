import { Elysia, type Static } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documentedWithQuery } from '../../http/openapi'
import { Usage, UsageQuery } from './model'
import type { UsageService } from './service'

export function usageRoutes(deps: { guard: ReturnType<typeof authGuard>; usage: UsageService }) {
  return new Elysia({ name: 'usage-routes' })
    .use(deps.guard)
    .get('/v1/usage', ({ principal, query }) => deps.usage.usage(requirePrincipal(principal).accountId, (query as Static<typeof UsageQuery>).limit ?? 50), {
      ...documentedWithQuery('getUsage', [], { 200: Usage }, UsageQuery),
    })
}
