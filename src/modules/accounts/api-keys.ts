import type { Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import type { ReadCache } from '../../db/read-cache'
import type { IdGenerator } from '../../ids'
import { ALL_SCOPES, isScope, type Scope } from '../../http/contract'
import type { Principal } from '../../http/admission'
import { commandLine } from '../../command-name'
import { OPERATOR, type AuditBy, type AuditEventInput } from '../audit/model'
import { AccountError, type KeyInfo, type Plan } from './model'
import type { AccountRow, AccountsRepo, ApiKeyRow } from './repo'

export const LIVE_PREFIX = 'svc_live_'
export const SANDBOX_PREFIX = 'svc_test_'
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** 32 characters of base62: log2(62) * 32 ≈ 190 bits of randomness. */
const KEY_RANDOM_CHARS = 32
/** How many characters of a key are kept in clear so a person can tell keys apart. */
const KEY_START_CHARS = 8

function randomKeyBody(): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = ''
  while (out.length < KEY_RANDOM_CHARS) {
    for (const b of crypto.getRandomValues(new Uint8Array(48))) {
      if (b < 248 && out.length < KEY_RANDOM_CHARS) out += KEY_ALPHABET[b % 62]
    }
  }
  return out
}

function toKeyInfo(row: ApiKeyRow): KeyInfo {
  return {
    id: row.id,
    name: row.name,
    start: row.start,
    sandbox: row.sandbox === 1,
    scopes: row.scopes.split(' ').filter(isScope),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}

type NewKey = { email: string; plan?: Plan; sandbox?: boolean; scopes?: Scope[]; name?: string }

/**
 * API keys: made (with their account when it is new), listed, revoked; each change with its audit
 * event in one transaction. A key is shown once; only its hash and its visible start are kept.
 */
export function createApiKeys(deps: {
  repo: AccountsRepo
  clock: Clock
  ids: IdGenerator
  keyCache: ReadCache<Principal | null>
  /** appends an audit event in the calling transaction */
  record: (by: AuditBy, e: Omit<AuditEventInput, 'actor' | 'origin'>) => Promise<unknown>
  ensureAccount: (email: string, plan?: Plan, by?: AuditBy) => Promise<AccountRow>
  requireAccount: (email: string) => Promise<AccountRow>
}) {
  const { repo, clock, ids, record } = deps
  const now = () => clock.now().toISOString()

  async function createKeyNow(opts: NewKey, by: AuditBy): Promise<{ key: string; info: KeyInfo; account: AccountRow }> {
    const account = await deps.ensureAccount(opts.email, opts.plan, by)
    return { ...(await insertKeyNow(account.id, null, opts, by)), account }
  }

  /**
   * A new key of the workspace `workspaceId`, made by `madeBy` (a team key, which acts as its maker
   * with the maker's role there) or by the workspace's own person (null: a personal key), and its
   * audit event (`details` beside the key's own), in the calling transaction.
   */
  async function insertKeyNow(workspaceId: string, madeBy: string | null, opts: Omit<NewKey, 'email' | 'plan'>, by: AuditBy, details: Record<string, string> = {}): Promise<{ key: string; info: KeyInfo }> {
    const key = (opts.sandbox ? SANDBOX_PREFIX : LIVE_PREFIX) + randomKeyBody()
    const prefixLength = (opts.sandbox ? SANDBOX_PREFIX : LIVE_PREFIX).length
    const row = {
      id: ids.next('key'),
      account_id: workspaceId,
      made_by: madeBy,
      name: opts.name ?? null,
      start: key.slice(0, prefixLength + KEY_START_CHARS),
      hash: sha256(key),
      sandbox: opts.sandbox ? 1 : 0,
      scopes: (opts.scopes?.length ? opts.scopes : ALL_SCOPES).join(' '),
      created_at: now(),
    }
    await repo.insertKey(row)
    const action = madeBy === null ? 'key.created' : 'workspace.key_created'
    await record(by, { accountId: workspaceId, action, target: { type: 'key', id: row.id }, details: { sandbox: row.sandbox === 1, scopes: row.scopes, ...details } })
    return { key, info: toKeyInfo({ ...row, last_used_at: null, revoked_at: null }) }
  }

  /** Revokes an unrevoked key and records it, in one transaction. */
  async function revokeNow(row: ApiKeyRow, by: AuditBy): Promise<void> {
    await repo.transaction(async () => {
      await repo.revokeKey(row.id, now())
      const action = row.made_by && row.made_by !== row.account_id ? 'workspace.key_revoked' : 'key.revoked'
      await record(by, { accountId: row.account_id, action, target: { type: 'key', id: row.id }, details: { sandbox: row.sandbox === 1 } })
    })
  }

  /** Creates a key (and the account if needed). The returned `key` is the only time it is visible. */
  async function createKey(opts: NewKey, by: AuditBy = OPERATOR): Promise<{ key: string; info: KeyInfo; account: AccountRow }> {
    // the account, the key and their audit events: all or nothing
    return repo.transaction(() => createKeyNow(opts, by))
  }

  return {
    createKey,

    /** A key of a workspace (see insertKeyNow), in one transaction with its audit event; shown once. */
    createWorkspaceKey: (workspaceId: string, madeBy: string | null, opts: Omit<NewKey, 'email' | 'plan'>, by: AuditBy, details: Record<string, string> = {}) =>
      repo.transaction(() => insertKeyNow(workspaceId, madeBy, opts, by, details)),

    /**
     * First start (an empty database): the owner account, on the `pro` plan (the operator is not held
     * to the free grant by their own server), with one live and one sandbox key. Null when the
     * database already has accounts.
     */
    async createFirstStartOwner(email: string): Promise<{ live: string; sandbox: string } | null> {
      if ((await repo.countAccounts()) > 0) return null
      const live = await createKey({ email, plan: 'pro', name: 'first start (live)' })
      const sandbox = await createKey({ email, plan: 'pro', sandbox: true, name: 'first start (sandbox)' })
      return { live: live.key, sandbox: sandbox.key }
    },

    async listKeys(email: string): Promise<KeyInfo[]> {
      return (await repo.listKeys((await deps.requireAccount(email)).id)).map(toKeyInfo)
    },

    /** Revokes by key id (`key_…`) or by the key's visible start (`svc_live_AbCd1234`). */
    async revokeKey(idOrStart: string): Promise<KeyInfo> {
      const matches = await repo.findKeys(idOrStart.trim())
      if (matches.length === 0) throw new AccountError(`no key matches "${idOrStart}"; list keys with: ${commandLine('keys list --email <email>')}`)
      if (matches.length > 1) throw new AccountError(`"${idOrStart}" matches ${matches.length} keys; revoke by key id instead (see ${commandLine('keys list --email <email>')})`)
      const row = matches[0]!
      if (!row.revoked_at) await revokeNow(row, OPERATOR)
      deps.keyCache.forget()
      return toKeyInfo((await repo.findKeys(row.id))[0]!)
    },

    /** The keys of one account (for the settings page, which knows the account, not the email). */
    async listKeysOf(accountId: string): Promise<KeyInfo[]> {
      return (await repo.listKeys(accountId)).map(toKeyInfo)
    },

    /** Revokes a key by id only if it belongs to `accountId`; null when it does not (or does not exist). */
    async revokeKeyOf(accountId: string, keyId: string, by: AuditBy = OPERATOR): Promise<KeyInfo | null> {
      const row = (await repo.findKeys(keyId)).find(k => k.id === keyId && k.account_id === accountId)
      if (!row) return null
      if (!row.revoked_at) await revokeNow(row, by)
      deps.keyCache.forget()
      return toKeyInfo((await repo.findKeys(row.id))[0]!)
    },
  }
}
