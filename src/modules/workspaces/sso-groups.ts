import { t, type Static } from 'elysia'
import { operationDefiner } from '../../http/contract'
import { ApiError } from '../../http/errors'
import { requireOwnWorkspace, requirePersonCredential } from './checks'
import { roleOf } from '../../http/principal'
import { auditBy } from '../audit/by'
import type { AuditService } from '../audit/service'
import { isRole, ROLES, type Role } from './model'
import type { WorkspacesRepo } from './repo'

const MAX_GROUP_NAME = 200
const MAX_GROUP_MAPPINGS = 100

// control characters (C0, DEL, C1) and the line and paragraph separators: no provider's group name holds one
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

const SsoGroupMapping = t.Object({
  group: t.String({ minLength: 1, maxLength: MAX_GROUP_NAME, examples: ['eng'], description: 'the group\'s name exactly as the provider sends it in the groups claim (case and spaces count)' }),
  role: t.String({ maxLength: 20, examples: ['editor'], description: `the role its members get: one of ${ROLES.join(', ')} (owner only by an owner)` }),
}, { title: 'SsoGroupMapping', description: 'People in this group at the identity provider join the workspace with this role at their next single sign-on.' })

const SsoGroupMappings = t.Object({
  mappings: t.Array(SsoGroupMapping, { maxItems: MAX_GROUP_MAPPINGS, description: `every mapping of the workspace (at most ${MAX_GROUP_MAPPINGS}); an empty list removes them all` }),
}, { title: 'SsoGroupMappings', description: 'The identity provider\'s groups whose members join the workspace, each with a role.' })
type SsoGroupMappings = Static<typeof SsoGroupMappings>

const WorkspaceParams = t.Object({ id: t.String({ maxLength: 100, description: 'the workspace\'s id: the credential\'s workspace' }) })

const defineOperation = operationDefiner<{ workspacesRepo: WorkspacesRepo; audit: AuditService }>()

/** The mappings checked: each group 1–200 characters of one line, named once; each role one of the four. */
function checkedMappings(body: SsoGroupMappings): { group: string; role: Role }[] {
  const seen = new Set<string>()
  return body.mappings.map((m, i) => {
    const field = `mappings[${i}]`
    const bad = (issue: string, what: string) => new ApiError('invalid_request', `${what} Send each group's name as the provider sends it (1 to ${MAX_GROUP_NAME} characters of one line), once, with one of the roles ${ROLES.join(', ')}.`, { details: [{ field, issue }] })
    if (m.group.trim() === '') throw bad('group is blank', `The group of ${field} is blank.`)
    if (CONTROL.test(m.group)) throw bad('group holds a control character', `The group of ${field} holds a control character (a line break, NUL, …).`)
    if (seen.has(m.group)) throw bad(`group "${m.group}" is named twice`, `The group "${m.group}" is mapped twice; a group maps to one role in a workspace.`)
    seen.add(m.group)
    if (!isRole(m.role)) throw bad(`role "${m.role}" is not one of ${ROLES.join(', ')}`, `The role "${m.role}" of ${field} is not a role.`)
    return { group: m.group, role: m.role }
  })
}

const setSsoGroups = defineOperation({
  id: 'setSsoGroups', method: 'PUT', path: '/v1/workspaces/:id/sso-groups', tag: 'Workspaces',
  summary: 'Set which identity-provider groups join the workspace',
  description: 'Replaces the workspace\'s group mappings: at each sign-in through the organisation\'s identity provider (single sign-on), a person in a mapped group (the `NOTESVC_OIDC_GROUPS_CLAIM` claim, `groups` by default) joins the workspace with the mapping\'s role, or has a membership that came from single sign-on raised to it; a membership that came from single sign-on whose groups no longer map the workspace is removed at their next sign-in, with their keys of it and OAuth grants to it revoked. Memberships from invitations are never changed. Needs the admin role; mapping a group to owner needs the owner role. `{id}` is the credential\'s workspace (a key made for it, or the browser\'s `X-Notesvc-Workspace`); a personal workspace has no members (409). Recorded in the audit log as `workspace.sso_groups_set`.',
  scopes: ['notes:write'], credits: 0, role: 'admin',
  errors: ['not_found', 'conflict'],
  params: WorkspaceParams,
  body: SsoGroupMappings,
  responses: { 200: SsoGroupMappings },
  // who joins a workspace is set by its people, not by agents
  mcp: { tool: false },
}, async (input, caller, { workspacesRepo, audit }) => {
  const { principal } = caller
  requireOwnWorkspace(principal, input.id)
  requirePersonCredential(principal, 'setSsoGroups')
  const mappings = checkedMappings(input)
  // a mapping to owner, made or dropped (dropping it removes its owners at their next sign-in), is an owner's to change
  const dropsOwners = (await workspacesRepo.groupMappings(input.id)).some(m => m.role === 'owner' && !mappings.some(n => n.group === m.group_name && n.role === 'owner'))
  if ((dropsOwners || mappings.some(m => m.role === 'owner')) && roleOf(principal) !== 'owner') {
    const what = dropsOwners ? 'dropping a group mapped to owner' : 'mapping a group to owner'
    throw new ApiError('insufficient_scope', `Your role in this workspace is ${roleOf(principal)}; ${what} needs owner. Map groups to admin or below, or ask an owner of the workspace.`, {
      details: [{ field: 'role', issue: `${roleOf(principal)} (needed: owner)` }],
    })
  }
  const workspace = await workspacesRepo.findWorkspace(input.id)
  if (!workspace) throw new ApiError('not_found', `No workspace ${input.id} exists.`)
  if (workspace.kind !== 'team') {
    throw new ApiError('conflict', 'A personal workspace has no members, so no group can join it. Create a team workspace (POST /v1/workspaces) and map the groups there.')
  }
  // the mappings and their audit line: both or neither
  await workspacesRepo.transaction(async () => {
    await workspacesRepo.replaceGroupMappings(input.id, mappings)
    await audit.recordBy(auditBy(caller), {
      accountId: principal.accountId, action: 'workspace.sso_groups_set', target: { type: 'workspace', id: input.id },
      details: { mappings: mappings.length, groups: mappings.map(m => `${m.group}=${m.role}`).join(', ').slice(0, 2000) },
    })
  })
  return { mappings: (await workspacesRepo.groupMappings(input.id)).map(r => ({ group: r.group_name, role: r.role })) }
})

/** the workspace's SSO group mapping operation (issue 35; the rest of the workspace API: ./contract.ts) */
export const ssoGroupsOperations = [setSsoGroups] as const
