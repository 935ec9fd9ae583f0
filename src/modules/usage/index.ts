import { Elysia } from 'elysia'
import { requirePrincipal, type authGuard } from '../../http/auth'
import { documented } from '../../http/openapi'
import { validatedQuery } from '../../http/schemas'
import { Usage, UsageQuery } from './model'
import type { UsageService } from './service'

export function usageRoutes(deps: { guard: ReturnType<typeof authGuard>; usage: UsageService }) {
  return new Elysia({ name: 'usage-routes' })
    .use(deps.guard)
    .get('/v1/usage', ({ principal, query }) => deps.usage.usage(requirePrincipal(principal).accountId, query.limit ?? 50), {
      ...validatedQuery(UsageQuery),
      response: { 200: Usage },
      ...documented('getUsage'),
    })
}
