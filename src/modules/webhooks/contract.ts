import { operationDefiner } from '../../http/contract'
import { IdParams } from '../../http/schemas'
import { CreatedWebhook, CreateWebhookRequest, WebhookDeliveryList, WebhookList } from './model'
import type { WebhooksService } from './service'

const defineOperation = operationDefiner<{ webhooks: WebhooksService }>()

// Webhooks are configured by people and scripts, not by agents: they are not MCP tools.
const notATool = { tool: false } as const

const listWebhooks = defineOperation({
  id: 'listWebhooks', method: 'GET', path: '/v1/webhooks', tag: 'Webhooks',
  summary: 'List webhook endpoints',
  description: 'The endpoints of this library (live or sandbox, as the credential), newest first, without their secrets.',
  role: 'admin', scopes: ['notes:read'], credits: 0,
  responses: { 200: WebhookList },
  mcp: notATool,
}, (_, { principal }, { webhooks }) => webhooks.list(principal))

const createWebhook = defineOperation({
  id: 'createWebhook', method: 'POST', path: '/v1/webhooks', tag: 'Webhooks',
  summary: 'Register a webhook endpoint',
  description: 'Registers a URL that receives the events listed in `events`: `note.completed`, `note.failed` and `note.updated` (a note\'s transcript edited: its words, a split, merge, word reassignment, replacement, restore or speaker change; data `{ id, noteId, version, change, segments }`), signed as the Standard Webhooks specification defines (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer carries the signing secret, shown this once. A sandbox key registers a sandbox endpoint, which receives events of sandbox notes only. An account may register a limited number of endpoints, live and sandbox together: 25 unless the server\'s operator set another number (`NOTESVC_MAX_WEBHOOKS_PER_ACCOUNT`); beyond it the answer is 409 `conflict`, and an endpoint must be deleted first. Each endpoint gets one delivery at a time, and an account at most 8 at once, so a receiver that is slow or does not answer delays only its own events.',
  role: 'admin', scopes: ['notes:write'], credits: 0,
  body: CreateWebhookRequest,
  responses: { 201: CreatedWebhook },
  errors: ['conflict'],
  mcp: notATool,
}, (body, { principal }, { webhooks }) => webhooks.create(principal, body))

const deleteWebhook = defineOperation({
  id: 'deleteWebhook', method: 'DELETE', path: '/v1/webhooks/:id', tag: 'Webhooks',
  summary: 'Delete a webhook endpoint',
  description: 'Deletes the endpoint, the events still waiting for it and its delivery log.',
  role: 'admin', scopes: ['notes:write'], credits: 0,
  params: IdParams,
  responses: { 204: null },
  errors: ['not_found'],
  mcp: notATool,
}, ({ id }, { principal }, { webhooks }) => webhooks.delete(principal, id))

const listWebhookDeliveries = defineOperation({
  id: 'listWebhookDeliveries', method: 'GET', path: '/v1/webhooks/:id/deliveries', tag: 'Webhooks',
  summary: 'Recent delivery attempts of an endpoint',
  description: 'The most recent attempts to deliver events to this endpoint (at most 100, from the last 30 days), newest first: event, attempt number, time, outcome, response code, error.',
  role: 'admin', scopes: ['notes:read'], credits: 0,
  params: IdParams,
  responses: { 200: WebhookDeliveryList },
  errors: ['not_found'],
  mcp: notATool,
}, ({ id }, { principal }, { webhooks }) => webhooks.deliveries(principal, id))

export const webhooksOperations = [listWebhooks, createWebhook, deleteWebhook, listWebhookDeliveries] as const
