/**
 * Workspaces (docs/decisions.md "Workspaces"). A workspace is an `accounts` row: a person's personal
 * workspace is the person's own account (its only owner), a team workspace a row of kind `team` whose
 * members hold roles. A library (`Library.accountId`) is a workspace's live or sandbox library.
 */
export { isRole, ROLE_GRANTS, roleAllows, ROLES, type Role } from '../../http/roles'

export type MemberVia = 'created' | 'invitation' | 'sso'

/** The email a team workspace's accounts row carries (the column is NOT NULL and unique); `.invalid` is reserved (RFC 2606), so no person signs up or in with it. */
export const teamEmail = (workspaceId: string) => `${workspaceId}@workspace.invalid`
export const isReservedEmail = (email: string) => /@workspace\.invalid$/i.test(email.trim())
