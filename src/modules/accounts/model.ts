import { ALL_SCOPES, isScope, type Scope } from '../../http/contract'
import type { AccountRow } from './repo'

export type Plan = AccountRow['plan']

/** A user-facing failure of an account operation (CLI and settings); the message says what to do. */
export class AccountError extends Error {}

export interface KeyInfo {
  id: string
  name: string | null
  start: string
  sandbox: boolean
  scopes: Scope[]
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export function parseScopes(list: string | undefined): Scope[] {
  if (list === undefined || list.trim() === '') return [...ALL_SCOPES]
  const scopes = list.split(/[\s,]+/).filter(Boolean)
  const unknown = scopes.filter(s => !isScope(s))
  if (unknown.length) {
    throw new AccountError(`unknown scope ${unknown.join(', ')}; choose from: ${ALL_SCOPES.join(', ')}`)
  }
  return [...new Set(scopes)] as Scope[]
}
