import { operationDefiner } from '../../http/contract'
import { Usage, UsageQuery } from './model'
import type { UsageService } from './service'

const defineOperation = operationDefiner<{ usage: UsageService }>()

const getUsage = defineOperation({
  id: 'getUsage', method: 'GET', path: '/v1/usage', tag: 'Usage',
  summary: 'Credit balance and usage history',
  description: 'The balance (grant first, then prepaid credits), what this period spent, the most recent charges and refunds, and the cost table.',
  scopes: ['usage:read'], credits: 0,
  query: UsageQuery,
  responses: { 200: Usage },
}, (q, { principal }, { usage }) => usage.usage(principal.accountId, q.limit ?? 50))

export const usageOperations = [getUsage] as const
