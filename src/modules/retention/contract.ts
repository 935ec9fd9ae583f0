import { operationDefiner } from '../../http/contract'
import { ApiError } from '../../http/errors'
import { auditBy, isOwnCredential } from '../audit/by'
import { RetentionPolicy, UpdateRetentionPolicyRequest } from './model'
import type { RetentionService } from './service'

const defineOperation = operationDefiner<{ retention: RetentionService }>()

// A policy that deletes data is set by people, on purpose, not by agents: not MCP tools.
const notATool = { tool: false } as const

const getRetentionPolicy = defineOperation({
  id: 'getRetentionPolicy', method: 'GET', path: '/v1/settings/retention', tag: 'Settings',
  summary: 'Read the account\'s retention policy',
  description: 'The account\'s own retention setting (`default` follows the instance\'s), the policy in effect and the instance default. The sweep runs on the server\'s schedule; finished and failed notes created more than `days` ago are swept, notes still processing never are.',
  scopes: ['notes:read'], credits: 0,
  responses: { 200: RetentionPolicy },
  mcp: notATool,
}, (_, { principal }, { retention }) => retention.policy(principal.accountId))

const updateRetentionPolicy = defineOperation({
  id: 'updateRetentionPolicy', method: 'PATCH', path: '/v1/settings/retention', tag: 'Settings',
  summary: 'Change the account\'s retention policy',
  description: 'Sets what the retention sweep deletes in this account (its live and sandbox libraries): `forever` keeps everything; `media` deletes a note\'s recording `days` after the note was created, keeping its transcript, summary and note (the note then shows `mediaRemovedAt`); `notes` deletes whole notes `days` after they were created, as deleteNote does; `default` follows the instance\'s default. `days` (1 to 36500) is required with `media` and `notes`. A sandbox key cannot change it (400): use a live key or the settings page. Nor can an OAuth access token or an ID token of the identity provider (403 `insufficient_scope`): a person sets it, on the settings page or with a live API key. The change is recorded in the audit log.',
  role: 'admin', scopes: ['notes:write'], credits: 0,
  body: UpdateRetentionPolicyRequest,
  responses: { 200: RetentionPolicy },
  mcp: notATool,
}, (body, caller, { retention }) => {
  const { principal } = caller
  if (principal.sandbox) throw new ApiError('invalid_request', 'A sandbox key cannot change the retention policy, which also applies to the live library: use a live key (svc_live_…) or the settings page (/settings).')
  // a policy that deletes data is set by the person, not by an application holding a token for them
  if (!isOwnCredential(principal)) throw new ApiError('insufficient_scope', 'An OAuth access token or ID token cannot change the retention policy, which can delete the account\'s notes: a person sets it on the settings page (/settings) or with a live API key (svc_live_…).')
  return retention.update(principal.accountId, body, auditBy(caller))
})

export const retentionOperations = [getRetentionPolicy, updateRetentionPolicy] as const
