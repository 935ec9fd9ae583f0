import type { authGuard } from '../../http/auth'
import { contractRoutes, queryReader, route } from '../../http/contract'
import { getUsage } from './contract'
import type { UsageService } from './service'

const usageQuery = queryReader(getUsage)

export function usageRoutes(deps: { guard: ReturnType<typeof authGuard>; usage: UsageService }) {
  return contractRoutes('usage-routes', deps.guard, [
    route(getUsage, ({ principal, query }) => deps.usage.usage(principal.accountId, usageQuery(query).limit ?? 50)),
  ])
}
