import type { Operation, OperationTable } from './http/contract'
import { discoveryOperations } from './modules/discovery/contract'
import { foldersOperations } from './modules/folders/contract'
import { tagsOperations } from './modules/tags/contract'
import { notesOperations } from './modules/notes/contract'
import { libraryQuestionsOperations } from './modules/library-questions/contract'
import { revisionsOperations } from './modules/notes/revisions-contract'
import { segmentsOperations } from './modules/notes/segments-contract'
import { exportsOperations } from './modules/exports/contract'
import { sharingOperations } from './modules/sharing/contract'
import { openAiOperations } from './modules/openai/contract'
import { processingOperations } from './modules/processing/contract'
import { uploadsOperations } from './modules/uploads/contract'
import { usageOperations } from './modules/usage/contract'
import { webhooksOperations } from './modules/webhooks/contract'
import { auditOperations } from './modules/audit/contract'
import { retentionOperations } from './modules/retention/contract'
import { workspacesOperations } from './modules/workspaces/contract'
import { ssoGroupsOperations } from './modules/workspaces/sso-groups'

/**
 * Every operation of the API, as the modules declare them (`modules/<name>/contract.ts`), in the order
 * of the interface's Endpoints. This registry stands above the modules, beside the composition root:
 * the shared http layer never imports it (it is handed the table), so imports flow one way. Admission
 * (scopes, rate classes), credits (prices), the OpenAPI document, the API index and the MCP tools all
 * read this table.
 */
export const OPERATIONS = [
  ...discoveryOperations,
  ...notesOperations,
  ...libraryQuestionsOperations,
  ...segmentsOperations,
  ...revisionsOperations,
  ...exportsOperations,
  ...sharingOperations,
  ...foldersOperations,
  ...tagsOperations,
  ...uploadsOperations,
  ...processingOperations,
  ...openAiOperations,
  ...usageOperations,
  ...webhooksOperations,
  ...auditOperations,
  ...retentionOperations,
  ...workspacesOperations,
  ...ssoGroupsOperations,
] as const

const byId = new Map<string, Operation>(OPERATIONS.map(o => [o.id, o]))
const byRoute = new Map<string, Operation>(OPERATIONS.map(o => [`${o.method} ${o.path}`, o]))

export const OPERATION_TABLE: OperationTable = {
  all: OPERATIONS,
  byId(id: string): Operation {
    const o = byId.get(id)
    if (!o) throw new Error(`unknown operation ${id}`)
    return o
  },
  forRoute: (method: string, path: string): Operation | undefined => byRoute.get(`${method} ${path}`),
}
