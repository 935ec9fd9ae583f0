import { t, type Static } from 'elysia'
import { DateTime, Integer, Nullable } from '../../http/schemas'

/** The request and answer shapes of the workspace operations (contract.ts). */

const Role = t.String({ description: 'viewer, editor, admin or owner', examples: ['editor'] })
const WorkspaceId = t.String({ minLength: 1, maxLength: 200, description: 'the workspace id' })

export const WorkspaceParams = t.Object({ id: WorkspaceId })
export const InvitationParams = t.Object({ id: WorkspaceId, invitationId: t.String({ minLength: 1, maxLength: 200, description: 'the invitation id' }) })
export const MemberParams = t.Object({ id: WorkspaceId, accountId: t.String({ minLength: 1, maxLength: 200, description: 'the member\'s account id' }) })
export const KeyParams = t.Object({ id: WorkspaceId, keyId: t.String({ minLength: 1, maxLength: 200, description: 'the key id' }) })

export const Workspace = t.Object({
  id: t.String({ examples: ['acct_01jd6x3m2k8v4n7p9q2r5s8t0w'] }),
  name: t.String({ description: '"Personal" for the person\'s own workspace' }),
  kind: t.Union([t.Literal('personal'), t.Literal('team')]),
  role: Role,
  current: t.Boolean({ description: 'the workspace of the credential that asked' }),
}, { title: 'Workspace', description: 'A workspace the person belongs to, with their role there.' })
export type Workspace = Static<typeof Workspace>

export const WorkspaceList = t.Object({ data: t.Array(Workspace) }, { title: 'WorkspaceList', description: 'The person\'s workspaces: the personal one first.' })

const Name = t.String({ minLength: 1, maxLength: 100, error: 'must be a name of 1 to 100 characters' })
export const WorkspaceNameRequest = t.Object({ name: Name }, { additionalProperties: false, title: 'WorkspaceNameRequest' })

export const InviteMemberRequest = t.Object(
  { email: t.String({ minLength: 3, maxLength: 320, error: 'must be an email address' }), role: t.String({ maxLength: 20 }) },
  { additionalProperties: false, title: 'InviteMemberRequest' },
)
export const AcceptInvitationRequest = t.Object({ token: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false, title: 'AcceptInvitationRequest' })
export const ChangeMemberRoleRequest = t.Object({ role: t.String({ maxLength: 20 }) }, { additionalProperties: false, title: 'ChangeMemberRoleRequest' })
export const CreateWorkspaceKeyRequest = t.Object(
  { name: t.Optional(t.String({ maxLength: 100 })), sandbox: t.Optional(t.Boolean()), scopes: t.Optional(t.Array(t.String({ maxLength: 50 }), { maxItems: 20 })) },
  { additionalProperties: false, title: 'CreateWorkspaceKeyRequest' },
)

export const Member = t.Object({
  accountId: t.String(), email: t.String(), role: Role, via: t.String({ description: 'created, invitation or sso' }), addedAt: DateTime, lastActiveAt: Nullable(DateTime),
}, { title: 'WorkspaceMember' })
export type Member = Static<typeof Member>

const InvitationFields = { id: t.String(), email: t.String(), role: Role, createdAt: DateTime, expiresAt: DateTime }
const Invitation = t.Object(InvitationFields, { title: 'WorkspaceInvitation' })
export const CreatedInvitation = t.Object(
  { ...InvitationFields, token: t.String({ description: 'shown once' }), acceptUrl: t.String({ format: 'uri' }) },
  { title: 'CreatedWorkspaceInvitation', description: 'The invitation, with its token: shown this once, send it (or acceptUrl) to the person invited.' },
)

const WorkspaceKey = t.Object({
  id: t.String(), name: Nullable(t.String()), start: t.String(), sandbox: t.Boolean(), madeBy: Nullable(t.String()), madeByEmail: Nullable(t.String()),
  createdAt: DateTime, lastUsedAt: Nullable(DateTime), revokedAt: Nullable(DateTime),
}, { title: 'WorkspaceKey' })
export const CreatedWorkspaceKey = t.Object({
  id: t.String(), name: Nullable(t.String()), start: t.String(), key: t.String({ description: 'shown once' }), sandbox: t.Boolean(), scopes: t.Array(t.String()), createdAt: DateTime,
}, { title: 'CreatedWorkspaceKey' })

const Balance = t.Object({
  plan: t.String(), grantTotal: Integer(), grantRemaining: Integer(), purchasedRemaining: Integer(), totalRemaining: Integer(), grantResetsAt: DateTime,
})

export const WorkspaceDetail = t.Object({
  id: t.String(), name: t.String(), kind: t.Union([t.Literal('personal'), t.Literal('team')]), role: Role,
  members: t.Array(Member),
  invitations: t.Array(Invitation, { description: 'the open ones' }),
  keys: t.Array(WorkspaceKey),
  usage: t.Object({
    balance: Balance,
    creditsThisMonth: Integer(),
    byMember: t.Array(t.Object({ accountId: Nullable(t.String()), email: Nullable(t.String()), credits: Integer() })),
  }),
  ssoGroups: t.Array(t.Object({ group: t.String(), role: Role })),
}, { title: 'WorkspaceDetail', description: 'A workspace for its admins: members, open invitations, keys, usage, SSO group mappings.' })
