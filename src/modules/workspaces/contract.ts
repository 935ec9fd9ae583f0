import { operationDefiner } from '../../http/contract'
import { auditBy } from '../audit/by'
import {
  AcceptInvitationRequest, ChangeMemberRoleRequest, CreatedInvitation, CreatedWorkspaceKey, CreateWorkspaceKeyRequest, InvitationParams,
  InviteMemberRequest, KeyParams, Member, MemberParams, Workspace, WorkspaceDetail, WorkspaceList, WorkspaceNameRequest, WorkspaceParams,
} from './schemas'
import type { WorkspacesService } from './service'
import type { Principal } from '../../http/principal'
import { requirePersonCredential } from './checks'

const defineOperation = operationDefiner<{ workspaces: WorkspacesService }>()

/** the principal, when it is the person's own credential (requirePersonCredential): every change below */
const person = (p: Principal, operation: string): Principal => (requirePersonCredential(p, operation), p)

// Reads need notes:read and changes notes:write (the interface's scope list is fixed); the role in the
// workspace is the real gate. `{id}` is always the credential's workspace, else 404 (but createWorkspaceKey
// from a personal credential: any workspace the person belongs to).
const READ = ['notes:read'] as const
const WRITE = ['notes:write'] as const
const ONE_WORKSPACE = 'The workspace must be the credential\'s own: an API key works in the workspace it was made for, the browser in the one `X-Notesvc-Workspace` names; any other answers 404.'

const listWorkspaces = defineOperation({
  id: 'listWorkspaces', method: 'GET', path: '/v1/workspaces', tag: 'Workspaces',
  summary: 'The person\'s workspaces',
  description: 'Every workspace the credential\'s person belongs to, with their role: their personal workspace first (named "Personal"), then their teams by name. `current` marks the credential\'s own.',
  scopes: READ, credits: 0, role: 'viewer',
  responses: { 200: WorkspaceList },
}, (_, { principal }, { workspaces }) => workspaces.list(principal))

const createWorkspace = defineOperation({
  id: 'createWorkspace', method: 'POST', path: '/v1/workspaces', tag: 'Workspaces',
  summary: 'Create a team workspace',
  description: 'A team workspace, with its own library and pooled credits, whose owner is the credential\'s person. Its name: 1 to 100 characters, no control characters. No key comes with it, and the key that made it still works only in its own workspace: make a key for it with POST /v1/workspaces/{id}/keys using your own key (createWorkspaceKey with the `id` answered here), then call with that key; or pick it in the browser.',
  scopes: WRITE, credits: 0, role: 'viewer',
  body: WorkspaceNameRequest,
  responses: { 201: Workspace },
}, (body, caller, { workspaces }) => workspaces.create(person(caller.principal, 'createWorkspace'), body, auditBy(caller)))

const getWorkspace = defineOperation({
  id: 'getWorkspace', method: 'GET', path: '/v1/workspaces/:id', tag: 'Workspaces',
  summary: 'A workspace, for its admins',
  description: `Its members with their roles, open invitations, keys (with their makers), this month's credits per member and the balance, and its SSO group mappings. ${ONE_WORKSPACE}`,
  scopes: READ, credits: 0, role: 'admin',
  params: WorkspaceParams,
  responses: { 200: WorkspaceDetail },
  errors: ['not_found'],
}, ({ id }, { principal }, { workspaces }) => workspaces.get(principal, id))

const renameWorkspace = defineOperation({
  id: 'renameWorkspace', method: 'PATCH', path: '/v1/workspaces/:id', tag: 'Workspaces',
  summary: 'Rename a team workspace',
  description: `A team workspace's new name (1 to 100 characters); a personal workspace answers 409. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'admin',
  params: WorkspaceParams,
  body: WorkspaceNameRequest,
  responses: { 200: Workspace },
  errors: ['not_found', 'conflict'],
}, ({ id, ...body }, caller, { workspaces }) => workspaces.rename(person(caller.principal, 'renameWorkspace'), id, body, auditBy(caller)))

const inviteMember = defineOperation({
  id: 'inviteMember', method: 'POST', path: '/v1/workspaces/:id/invitations', tag: 'Workspaces',
  summary: 'Invite a person',
  description: `An invitation for an email address with a role (viewer, editor, admin; owner only by an owner), open 7 days. Its token is shown this once: send it, or \`acceptUrl\`, to the person, who accepts it signed in with that email. Someone already a member answers 409. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'admin',
  params: WorkspaceParams,
  body: InviteMemberRequest,
  responses: { 201: CreatedInvitation },
  errors: ['not_found', 'conflict'],
  mcp: { tool: false },
}, ({ id, ...body }, caller, { workspaces }) => workspaces.invite(person(caller.principal, 'inviteMember'), id, body, auditBy(caller)))

const revokeInvitation = defineOperation({
  id: 'revokeInvitation', method: 'DELETE', path: '/v1/workspaces/:id/invitations/:invitationId', tag: 'Workspaces',
  summary: 'Revoke an invitation',
  description: `An open invitation can no longer be accepted. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'admin',
  params: InvitationParams,
  responses: { 204: null },
  errors: ['not_found'],
  mcp: { tool: false },
}, ({ id, invitationId }, caller, { workspaces }) => workspaces.revokeInvitation(person(caller.principal, 'revokeInvitation'), id, invitationId, auditBy(caller)))

const acceptInvitation = defineOperation({
  id: 'acceptInvitation', method: 'POST', path: '/v1/invitations/accept', tag: 'Workspaces',
  summary: 'Accept an invitation',
  description: 'The credential\'s person joins the invitation\'s workspace with its role. The invitation must be open (not used, revoked or expired) and made for the person\'s email (any case); otherwise 404.',
  scopes: WRITE, credits: 0, role: 'viewer',
  body: AcceptInvitationRequest,
  responses: { 200: Workspace },
  errors: ['not_found', 'conflict'],
  mcp: { tool: false },
}, (body, caller, { workspaces }) => workspaces.accept(person(caller.principal, 'acceptInvitation'), body.token, auditBy(caller)))

const changeMemberRole = defineOperation({
  id: 'changeMemberRole', method: 'PATCH', path: '/v1/workspaces/:id/members/:accountId', tag: 'Workspaces',
  summary: 'Change a member\'s role',
  description: `viewer, editor, admin or owner; to or from owner only by an owner. The last owner cannot be demoted (409): make another member owner first. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'admin',
  params: MemberParams,
  body: ChangeMemberRoleRequest,
  responses: { 200: Member },
  errors: ['not_found', 'conflict'],
  mcp: { tool: false },
}, ({ id, accountId, ...body }, caller, { workspaces }) => workspaces.changeRole(person(caller.principal, 'changeMemberRole'), id, accountId, body, auditBy(caller)))

const removeMember = defineOperation({
  id: 'removeMember', method: 'DELETE', path: '/v1/workspaces/:id/members/:accountId', tag: 'Workspaces',
  summary: 'Remove a member, or leave',
  description: `An admin removes a member (an owner only by an owner); any member removes themselves (leaves). Their keys of the workspace, its OAuth grants to them and their open invitations are revoked at once, the webhook endpoints they made are disabled and their share links revoked; the notes they made stay. The last owner answers 409: make another member owner first. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'viewer',
  params: MemberParams,
  responses: { 204: null },
  errors: ['not_found', 'conflict'],
  mcp: { tool: false },
}, ({ id, accountId }, caller, { workspaces }) => workspaces.remove(person(caller.principal, 'removeMember'), id, accountId, auditBy(caller)))

const createWorkspaceKey = defineOperation({
  id: 'createWorkspaceKey', method: 'POST', path: '/v1/workspaces/:id/keys', tag: 'Workspaces',
  summary: 'Make an API key for the workspace',
  description: 'A key that works in this workspace as the credential\'s person, with their role there at each request (a member removed: refused). `scopes` (default: the credential\'s own) cannot exceed the credential\'s; a sandbox credential makes sandbox keys. The key is shown once. The workspace is the credential\'s own or, with the person\'s personal key (or the browser in their personal workspace), any workspace the person is a member of: how a team made with createWorkspace gets its first key without the browser. A key of a team makes keys for that team only. Any other workspace, or one that does not exist, answers 404.',
  scopes: WRITE, credits: 0, role: 'viewer',
  params: WorkspaceParams,
  body: CreateWorkspaceKeyRequest,
  responses: { 201: CreatedWorkspaceKey },
  errors: ['not_found'],
  mcp: { tool: false },
}, ({ id, ...body }, caller, { workspaces }) => workspaces.createKey(person(caller.principal, 'createWorkspaceKey'), id, body, auditBy(caller)))

const revokeWorkspaceKey = defineOperation({
  id: 'revokeWorkspaceKey', method: 'DELETE', path: '/v1/workspaces/:id/keys/:keyId', tag: 'Workspaces',
  summary: 'Revoke a key of the workspace',
  description: `An admin revokes any key of the workspace, a member their own. ${ONE_WORKSPACE}`,
  scopes: WRITE, credits: 0, role: 'viewer',
  params: KeyParams,
  responses: { 204: null },
  errors: ['not_found'],
  mcp: { tool: false },
}, ({ id, keyId }, caller, { workspaces }) => workspaces.revokeKey(person(caller.principal, 'revokeWorkspaceKey'), id, keyId, auditBy(caller)))

export const workspacesOperations = [
  listWorkspaces, createWorkspace, getWorkspace, renameWorkspace, inviteMember, revokeInvitation, acceptInvitation,
  changeMemberRole, removeMember, createWorkspaceKey, revokeWorkspaceKey,
] as const
