import type { Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import { ReadCache } from '../../db/read-cache'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { ALL_SCOPES, isScope, type Scope } from '../../http/contract'
import type { Principal } from '../../http/admission'
import type { AccountRow, AccountsRepo, ApiKeyRow } from './repo'
import { commandLine } from '../../command-name'
import { grantPeriod, isPlan, PLANS } from '../credits/model'
import type { CreditsService } from '../credits/service'
import type { AuditService } from '../audit/service'
import { OPERATOR, type AuditBy, type AuditEventInput } from '../audit/model'

export const LIVE_PREFIX = 'svc_live_'
export const SANDBOX_PREFIX = 'svc_test_'
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** 32 characters of base62: log2(62) * 32 ≈ 190 bits of randomness. */
const KEY_RANDOM_CHARS = 32
/** How many characters of a key are kept in clear so a person can tell keys apart. */
const KEY_START_CHARS = 8
/** `last_used_at` is written at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000
/** keys whose digest cachedApiKey remembers (recentDigests) */
const MAX_RECENT_DIGESTS = 1000

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

export function parseScopes(list: string | undefined): Scope[] {
  if (list === undefined || list.trim() === '') return [...ALL_SCOPES]
  const scopes = list.split(/[\s,]+/).filter(Boolean)
  const unknown = scopes.filter(s => !isScope(s))
  if (unknown.length) {
    throw new AccountError(`unknown scope ${unknown.join(', ')}; choose from: ${ALL_SCOPES.join(', ')}`)
  }
  return [...new Set(scopes)] as Scope[]
}

export type AccountsService = ReturnType<typeof createAccountsService>

/**
 * How long a verified key is trusted where other nodes' writes cannot be seen (PostgreSQL) before the
 * database is asked again: a key revoked through any node is refused by every node within this (the
 * interface's bound is one second).
 */
export const SHARED_KEY_CACHE_MS = 500

/**
 * The cache of verified API keys: a ReadCache under the store's read stamp (`Store.readStamp`). On
 * SQLite any commit empties it (the stamp is the WAL-index header's commit count, db/wal-index.ts, so
 * a key revoked by another process, the CLI, is refused on the next request); on PostgreSQL every entry is forgotten at the next half-second
 * boundary, and one read while a boundary passed is not kept, so a revoked key is refused by every
 * node within half a second.
 */
export function keyCacheFor(store: Store, enabled: boolean): ReadCache<Principal | null> {
  return new ReadCache(store.readStamp(SHARED_KEY_CACHE_MS), enabled)
}

/**
 * sha256, remembered for the last `max` strings asked about (emptied when full): for cachedApiKey, where
 * the SHA-256 of a key was about a tenth of the kept first page's own work (bench/README.md). Only the
 * digest is remembered, never whether the key is good: the key cache answers that under its stamp.
 */
function rememberedDigests(max: number): (s: string) => string {
  const digests = new Map<string, string>()
  return s => {
    let digest = digests.get(s)
    if (digest === undefined) {
      if (digests.size >= max) digests.clear()
      digests.set(s, (digest = sha256(s)))
    }
    return digest
  }
}

export function createAccountsService(deps: { repo: AccountsRepo; clock: Clock; ids: IdGenerator; keyCache: ReadCache<Principal | null>; credits: CreditsService; audit?: Pick<AuditService, 'recordBy'> }) {
  const { repo, clock, ids } = deps
  /** Appends an event to the audit log, in the calling transaction (the change it records). */
  const record = (by: AuditBy, e: Omit<AuditEventInput, 'actor' | 'origin'>) => deps.audit?.recordBy(by, e) ?? Promise.resolve()
  const lastTouched = new Map<string, number>()
  const recentKeyDigest = rememberedDigests(MAX_RECENT_DIGESTS)

  function now() {
    return clock.now().toISOString()
  }

  /** The account of `email`, created (on `plan`, else free) if there is none; an existing one moves to `plan` when given. */
  async function ensureAccount(email: string, plan?: Plan, by: AuditBy = OPERATOR): Promise<AccountRow> {
    const normalized = email.trim()
    if (!/^[^\s@]+@[^\s@]+$/.test(normalized)) throw new AccountError(`"${email}" is not an email address; pass --email you@example.com`)
    return repo.transaction(async () => {
      let existing = await repo.findAccountByEmail(normalized)
      if (!existing) {
        const at = clock.now()
        const id = ids.next('acct')
        // Another node may create the same account at the same moment: then its row is the one.
        if (await repo.insertAccount({ id, email: normalized, plan: plan ?? 'free', grant_period: grantPeriod(at), created_at: at.toISOString() })) {
          await record(by, { accountId: id, action: 'account.created', target: { type: 'account', id }, details: { plan: plan ?? 'free' } })
          return (await repo.findAccount(id))!
        }
        existing = (await repo.findAccountByEmail(normalized))!
      }
      if (plan && plan !== existing.plan) {
        await repo.setPlan(existing.id, plan)
        await record(by, { accountId: existing.id, action: 'plan.changed', target: { type: 'account', id: existing.id }, details: { from: existing.plan, to: plan } })
      }
      return (await repo.findAccount(existing.id))!
    })
  }

  async function requireAccount(email: string): Promise<AccountRow> {
    const account = await repo.findAccountByEmail(email.trim())
    if (!account) throw new AccountError(`no account with email ${email}; create one with: ${commandLine(`keys create --email ${email}`)}`)
    return account
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

  async function createKeyNow(opts: { email: string; plan?: Plan; sandbox?: boolean; scopes?: Scope[]; name?: string }, by: AuditBy): Promise<{ key: string; info: KeyInfo; account: AccountRow }> {
      const account = await ensureAccount(opts.email, opts.plan, by)
      const key = (opts.sandbox ? SANDBOX_PREFIX : LIVE_PREFIX) + randomKeyBody()
      const prefixLength = (opts.sandbox ? SANDBOX_PREFIX : LIVE_PREFIX).length
      const row = {
        id: ids.next('key'),
        account_id: account.id,
        name: opts.name ?? null,
        start: key.slice(0, prefixLength + KEY_START_CHARS),
        hash: sha256(key),
        sandbox: opts.sandbox ? 1 : 0,
        scopes: (opts.scopes?.length ? opts.scopes : ALL_SCOPES).join(' '),
        created_at: now(),
      }
      await repo.insertKey(row)
      await record(by, { accountId: account.id, action: 'key.created', target: { type: 'key', id: row.id }, details: { sandbox: row.sandbox === 1, scopes: row.scopes } })
      return { key, info: toKeyInfo({ ...row, last_used_at: null, revoked_at: null }), account }
  }

  /** Revokes an unrevoked key and records it, in one transaction. */
  async function revokeNow(row: ApiKeyRow, by: AuditBy): Promise<void> {
    await repo.transaction(async () => {
      await repo.revokeKey(row.id, now())
      await record(by, { accountId: row.account_id, action: 'key.revoked', target: { type: 'key', id: row.id }, details: { sandbox: row.sandbox === 1 } })
    })
  }

  const service = {
    ensureAccount,
    requireAccount,
    isEmpty: async () => (await repo.countAccounts()) === 0,
    /** Every account's id, a page at a time, in id order after `after` ('' for the first page). */
    accountIdsAfter: (after: string, limit: number) => repo.accountIdsAfter(after, limit),

    /**
     * First start (an empty database): the owner account, on the `pro` plan (the operator is not held
     * to the free grant by their own server), with one live and one sandbox key. Null when the
     * database already has accounts.
     */
    async createFirstStartOwner(email: string): Promise<{ live: string; sandbox: string } | null> {
      if ((await repo.countAccounts()) > 0) return null
      const live = await service.createKey({ email, plan: 'pro', name: 'first start (live)' })
      const sandbox = await service.createKey({ email, plan: 'pro', sandbox: true, name: 'first start (sandbox)' })
      return { live: live.key, sandbox: sandbox.key }
    },

    /** Creates a key (and the account if needed). The returned `key` is the only time it is visible. */
    async createKey(opts: { email: string; plan?: Plan; sandbox?: boolean; scopes?: Scope[]; name?: string }, by: AuditBy = OPERATOR): Promise<{ key: string; info: KeyInfo; account: AccountRow }> {
      // the account, the key and their audit events: all or nothing
      return repo.transaction(() => createKeyNow(opts, by))
    },

    async listKeys(email: string): Promise<KeyInfo[]> {
      return (await repo.listKeys((await requireAccount(email)).id)).map(toKeyInfo)
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

    async setPlan(email: string, plan: Plan, by: AuditBy = OPERATOR): Promise<AccountRow> {
      if (!isPlan(plan)) throw new AccountError(`unknown plan "${plan}"; use ${Object.keys(PLANS).join(' or ')}`)
      const account = await requireAccount(email)
      if (account.plan !== plan) {
        await repo.transaction(async () => {
          await repo.setPlan(account.id, plan)
          await record(by, { accountId: account.id, action: 'plan.changed', target: { type: 'account', id: account.id }, details: { from: account.plan, to: plan } })
        })
      }
      return (await repo.findAccount(account.id))!
    },

    async addPurchasedCredits(email: string, credits: number): Promise<AccountRow> {
      if (!Number.isInteger(credits) || credits <= 0) throw new AccountError(`--credits must be a positive whole number, not "${credits}"`)
      const account = await requireAccount(email)
      await deps.credits.topUp({ accountId: account.id, credits, source: 'cli' })
      return (await repo.findAccount(account.id))!
    },

    /**
     * The account whose `oidc_subject` (the ID-token link of migration 3, written before links moved to
     * the sso module's `sso_identities`) names `subject`, or null: read by the sso module's one
     * linking rule (src/modules/sso/links.ts), which moves such a link into its own table.
     */
    accountOfOidcSubject: async (subject: string): Promise<AccountRow | null> => (await repo.findAccountByOidcSubject(subject)) ?? null,

    /** The account of `email` (ASCII case aside), or null. */
    accountOfEmail: async (email: string): Promise<AccountRow | null> => (await repo.findAccountByEmail(email.trim())) ?? null,

    /**
     * Creates the account of `email` on `plan` unless one exists (another node may have made it a
     * moment ago): `created` says which. An existing account keeps its plan.
     */
    async createAccount(email: string, plan: Plan): Promise<{ account: AccountRow; created: boolean }> {
      const normalized = email.trim()
      if (!/^[^\s@]+@[^\s@]+$/.test(normalized)) throw new AccountError(`"${email}" is not an email address`)
      return repo.transaction(async () => {
        const at = clock.now()
        const id = ids.next('acct')
        if (await repo.insertAccount({ id, email: normalized, plan, grant_period: grantPeriod(at), created_at: at.toISOString() })) return { account: (await repo.findAccount(id))!, created: true }
        return { account: (await repo.findAccountByEmail(normalized))!, created: false }
      })
    },

    /** The password hash of the account of `email` (for the web sign-in), or null when there is no such account. */
    async passwordOf(email: string): Promise<{ accountId: string; passwordHash: string | null } | null> {
      const row = await repo.findPasswordByEmail(email)
      return row ? { accountId: row.id, passwordHash: row.password_hash } : null
    },

    /** Stores an account's password hash (argon2id, made by the web module). */
    async setPasswordHash(accountId: string, hash: string): Promise<void> {
      await repo.setPasswordHash(accountId, hash)
    },

    /** The email of an account, or null when there is no such account. */
    async emailOf(accountId: string): Promise<string | null> {
      return (await repo.findAccount(accountId))?.email ?? null
    },

    /**
     * verifyApiKey's answer when it is known at once: the principal of a live key the key cache holds
     * at its current stamp, when the key's last use need not be written now. undefined otherwise (an
     * unknown, revoked or uncached key, or a use to record): then verifyApiKey.
     */
    cachedApiKey(token: string): Principal | undefined {
      if (!token.startsWith(LIVE_PREFIX) && !token.startsWith(SANDBOX_PREFIX)) return undefined
      const principal = deps.keyCache.peek(recentKeyDigest(token))
      if (!principal || (lastTouched.get(principal.credentialId) ?? 0) + TOUCH_INTERVAL_MS <= clock.now().getTime()) return undefined
      return principal
    },

    /** The API-key credential check: a live, unrevoked key gives its principal; anything else null. */
    async verifyApiKey(token: string): Promise<Principal | null> {
      if (!token.startsWith(LIVE_PREFIX) && !token.startsWith(SANDBOX_PREFIX)) return null
      const hash = sha256(token)
      const principal = await deps.keyCache.getAsync(hash, async () => {
        const row = await repo.findKeyByHash(hash)
        if (!row || row.revoked_at) return null
        return {
          accountId: row.account_id,
          sandbox: row.sandbox === 1,
          scopes: new Set(row.scopes.split(' ').filter(isScope)),
          credentialId: row.id,
          source: 'api_key' as const,
        }
      })
      if (principal) {
        const t = clock.now().getTime()
        if ((lastTouched.get(principal.credentialId) ?? 0) + TOUCH_INTERVAL_MS <= t) {
          lastTouched.set(principal.credentialId, t)
          await repo.touchKey(principal.credentialId, new Date(t).toISOString())
        }
      }
      return principal
    },

  }
  return service
}
