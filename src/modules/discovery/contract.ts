import { operationDefiner } from '../../http/contract'
import { ApiIndex, Health, HealthQuery } from './model'
import type { DiscoveryService } from './service'

const defineOperation = operationDefiner<{ discovery: DiscoveryService }>()

const getApiIndex = defineOperation({
  id: 'getApiIndex', method: 'GET', path: '/v1', tag: 'Discovery',
  summary: 'Describe the API',
  description: 'What the service offers: how to authenticate, the sandbox rules, credits, rate limits, scopes and where each resource lives. No credential needed.',
  scopes: [], credits: 0,
  responses: { 200: ApiIndex },
}, (_, __, { discovery }) => discovery.index())

const getHealth = defineOperation({
  id: 'getHealth', method: 'GET', path: '/v1/health', tag: 'Discovery',
  summary: 'Liveness check',
  description: 'Answers while the service is up, with its version and the engines in use (with `detail`: the database back end and the number of live job workers); never fails on account state. No credential needed.',
  scopes: [], credits: 0,
  query: HealthQuery,
  responses: { 200: Health },
}, ({ detail }, __, { discovery }) => discovery.health(detail))

export const discoveryOperations = [getApiIndex, getHealth] as const
