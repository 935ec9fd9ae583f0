import { discoveryOperations } from '../modules/discovery/contract'
import { foldersOperations } from '../modules/folders/contract'
import { notesOperations } from '../modules/notes/contract'
import { openAiOperations } from '../modules/openai/contract'
import { processingOperations } from '../modules/processing/contract'
import { uploadsOperations } from '../modules/uploads/contract'
import { usageOperations } from '../modules/usage/contract'
import { webhooksOperations } from '../modules/webhooks/contract'
import { SCOPES, type Credits, type Operation, type Scope } from './contract'

export { SCOPES, type Credits, type Operation, type Scope }

export const ALL_SCOPES: Scope[] = SCOPES.map(s => s.scope)

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as string[]).includes(value)
}

/**
 * Every operation of the API, as the modules declare them (`modules/<name>/contract.ts`), in the order
 * of the interface's Endpoints. Authentication, scopes, rate classes, credits, the OpenAPI document and
 * the MCP tools all read this table.
 */
export const OPERATIONS = [
  ...discoveryOperations,
  ...notesOperations,
  ...foldersOperations,
  ...uploadsOperations,
  ...processingOperations,
  ...openAiOperations,
  ...usageOperations,
  ...webhooksOperations,
] as const

export type OperationId = (typeof OPERATIONS)[number]['id']

const byId = new Map<string, Operation>(OPERATIONS.map(o => [o.id, o]))
const byRoute = new Map<string, Operation>(OPERATIONS.map(o => [`${o.method} ${o.path}`, o]))

export function operation(id: string): Operation {
  const o = byId.get(id)
  if (!o) throw new Error(`unknown operation ${id}`)
  return o
}

export function operationForRoute(method: string, path: string): Operation | undefined {
  return byRoute.get(`${method} ${path}`)
}
