import { ApiError } from '../../http/errors'
import { actorOf, roleOf, type Principal } from '../../http/principal'
import { isRole, roleAllows, ROLES, type Role } from './model'
import type { WorkspaceRow } from './repo'
import { isOwnCredential } from '../audit/by'

/** The refusals the workspace operations share: the workspace named, the role held, names and roles sent. */

/** 404 unless `id` is the credential's workspace: a key is made for one workspace, the browser names its own. */
export function requireOwnWorkspace(p: Principal, id: string): void {
  if (id !== p.accountId) throw notTheCredentialsWorkspace(id)
}

/**
 * The one 404 for a workspace the credential may not name, the same whether it exists or not (nobody
 * learns which ids are teams), saying how to get a key that works there.
 */
export function notTheCredentialsWorkspace(id: string): ApiError {
  return new ApiError('not_found', `No workspace ${id} for this credential: an API key works in the workspace it was made for, and the browser in the one its workspace menu picked (X-Notesvc-Workspace). For a team you belong to, make a key with your personal key (POST /v1/workspaces/{id}/keys), then use that key. List yours with GET /v1/workspaces.`, {
    details: [{ field: 'id', issue: 'not the credential\'s workspace' }],
  })
}

/**
 * Whether the credential speaks for the whole person rather than for one of their teams: one of the
 * person's personal workspace (their personal key, or the browser working there). Only such a one makes
 * a key for another workspace the person belongs to (createWorkspaceKey); a team's key stays in its
 * team, so a team key that leaks reaches nothing else of the person's.
 */
export const isPersonalCredential = (p: Principal): boolean => p.accountId === actorOf(p)

/**
 * 403 unless the person calls with their own credential (a key, or the browser): what changes who is in a
 * workspace, which keys it has or where a note lives is not for an application acting for them (an OAuth
 * access token) nor an ID token, as with the audit log and the retention policy. Otherwise an app's
 * token could mint a key that outlives the grant, or invite anyone.
 */
export function requirePersonCredential(p: Principal, operation: string): void {
  if (isOwnCredential(p)) return
  throw new ApiError('insufficient_scope', `An OAuth access token or ID token cannot call ${operation}: a person does it in the browser (/settings/workspace) or with an API key of their own (svc_live_…).`)
}

/** 403 insufficient_scope naming the role held and the one needed, as admission words it. */
export function requireRole(p: Principal, needed: Role, operation: string, why = ''): void {
  const held = roleOf(p)
  if (roleAllows(held, needed)) return
  throw new ApiError('insufficient_scope', `Your role in this workspace is ${held}; ${operation}${why} needs ${needed} or above. Ask an owner or admin of the workspace to change your role.`, {
    details: [{ field: 'role', issue: `${held} (needed: ${needed})` }],
  })
}

/** 409 for a personal workspace, which has one member (its person) and the name "Personal". */
export function requireTeam(ws: WorkspaceRow, what: string): void {
  if (ws.kind === 'team') return
  throw new ApiError('conflict', `A personal workspace cannot ${what}: it belongs to one person. Create a team workspace (POST /v1/workspaces) and do it there.`)
}

/** A role sent in a body; 400 listing the four otherwise. */
export function parseRole(value: unknown): Role {
  if (isRole(value)) return value
  throw new ApiError('invalid_request', `role must be one of ${ROLES.join(', ')} (not ${JSON.stringify(value)}); send one of them.`, {
    details: [{ field: 'role', issue: `must be one of ${ROLES.join(', ')}` }],
  })
}

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/

/** A workspace's name: trimmed, 1 to 100 characters, no control characters; 400 otherwise. */
export function parseName(value: string): string {
  const name = value.trim()
  const refuse = (issue: string) => new ApiError('invalid_request', `name ${issue}; send a name of 1 to 100 characters without line breaks or control characters.`, { details: [{ field: 'name', issue }] })
  if (name.length === 0) throw refuse('is empty')
  if (name.length > 100) throw refuse(`has ${name.length} characters (at most 100)`)
  if (CONTROL_CHARACTERS.test(name)) throw refuse('contains a control character')
  return name
}

/** the name a workspace is shown with: a team's own, "Personal" for the person's */
export const shownName = (ws: { kind: WorkspaceRow['kind']; name: string | null }) => (ws.kind === 'team' ? ws.name ?? '' : 'Personal')
export const shownKind = (ws: Pick<WorkspaceRow, 'kind'>): 'personal' | 'team' => (ws.kind === 'team' ? 'team' : 'personal')
