import { defineOperation } from '../../http/contract'
import { Usage, UsageQuery } from './model'

export const getUsage = defineOperation({
  id: 'getUsage', method: 'GET', path: '/v1/usage', tag: 'Usage',
  summary: 'Credit balance and usage history',
  description: 'The balance (grant first, then prepaid credits), what this period spent, the most recent charges and refunds, and the cost table.',
  scopes: ['usage:read'], credits: 0,
  query: UsageQuery,
  responses: { 200: Usage },
})

export const usageOperations = [getUsage] as const
