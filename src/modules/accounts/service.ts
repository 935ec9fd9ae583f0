import type { Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import type { ReadCache } from '../../db/read-cache'
import type { IdGenerator } from '../../ids'
import { ALL_SCOPES, isScope, type Scope } from '../../http/operations'
import type { Principal } from '../../http/admission'
import type { AccountRow, AccountsRepo, ApiKeyRow } from './repo'
import { commandLine } from '../../command-name'
import { grantPeriod, isPlan, PLANS } from '../credits/model'
import type { CreditsService } from '../credits/service'

export const LIVE_PREFIX = 'svc_live_'
export const SANDBOX_PREFIX = 'svc_test_'
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** 32 characters of base62: log2(62) * 32 ≈ 190 bits of randomness. */
const KEY_RANDOM_CHARS = 32
/** How many characters of a key are kept in clear so a person can tell keys apart. */
const KEY_START_CHARS = 8
/** `last_used_at` is written at most this often per key, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000

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

export function createAccountsService(deps: { repo: AccountsRepo; clock: Clock; ids: IdGenerator; keyCache: ReadCache<Principal | null>; credits: CreditsService }) {
  const { repo, clock, ids } = deps
  const lastTouched = new Map<string, number>()

  function now() {
    return clock.now().toISOString()
  }

  function ensureAccount(email: string, plan?: Plan): AccountRow {
    const normalized = email.trim()
    if (!/^[^\s@]+@[^\s@]+$/.test(normalized)) throw new AccountError(`"${email}" is not an email address; pass --email you@example.com`)
    return repo.transaction(() => {
      const existing = repo.findAccountByEmail(normalized)
      if (existing) {
        if (plan && plan !== existing.plan) repo.setPlan(existing.id, plan)
        return repo.findAccount(existing.id)!
      }
      const at = clock.now()
      const id = ids.next('acct')
      repo.insertAccount({ id, email: normalized, plan: plan ?? 'free', grant_period: grantPeriod(at), created_at: at.toISOString() })
      return repo.findAccount(id)!
    })
  }

  function requireAccount(email: string): AccountRow {
    const account = repo.findAccountByEmail(email.trim())
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

  return {
    ensureAccount,
    requireAccount,
    isEmpty: () => repo.countAccounts() === 0,

    /** Creates a key (and the account if needed). The returned `key` is the only time it is visible. */
    createKey(opts: { email: string; plan?: Plan; sandbox?: boolean; scopes?: Scope[]; name?: string }): { key: string; info: KeyInfo; account: AccountRow } {
      const account = ensureAccount(opts.email, opts.plan)
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
      repo.insertKey(row)
      return { key, info: toKeyInfo({ ...row, last_used_at: null, revoked_at: null }), account }
    },

    listKeys(email: string): KeyInfo[] {
      return repo.listKeys(requireAccount(email).id).map(toKeyInfo)
    },

    /** Revokes by key id (`key_…`) or by the key's visible start (`svc_live_AbCd1234`). */
    revokeKey(idOrStart: string): KeyInfo {
      const matches = repo.findKeys(idOrStart.trim())
      if (matches.length === 0) throw new AccountError(`no key matches "${idOrStart}"; list keys with: ${commandLine('keys list --email <email>')}`)
      if (matches.length > 1) throw new AccountError(`"${idOrStart}" matches ${matches.length} keys; revoke by key id instead (see ${commandLine('keys list --email <email>')})`)
      const row = matches[0]!
      if (!row.revoked_at) repo.revokeKey(row.id, now())
      return toKeyInfo(repo.findKeys(row.id)[0]!)
    },

    /** The keys of one account (for the settings page, which knows the account, not the email). */
    listKeysOf(accountId: string): KeyInfo[] {
      return repo.listKeys(accountId).map(toKeyInfo)
    },

    /** Revokes a key by id only if it belongs to `accountId`; null when it does not (or does not exist). */
    revokeKeyOf(accountId: string, keyId: string): KeyInfo | null {
      const row = repo.findKeys(keyId).find(k => k.id === keyId && k.account_id === accountId)
      if (!row) return null
      if (!row.revoked_at) repo.revokeKey(row.id, now())
      return toKeyInfo(repo.findKeys(row.id)[0]!)
    },

    setPlan(email: string, plan: Plan): AccountRow {
      if (!isPlan(plan)) throw new AccountError(`unknown plan "${plan}"; use ${Object.keys(PLANS).join(' or ')}`)
      const account = requireAccount(email)
      repo.setPlan(account.id, plan)
      return repo.findAccount(account.id)!
    },

    addPurchasedCredits(email: string, credits: number): AccountRow {
      if (!Number.isInteger(credits) || credits <= 0) throw new AccountError(`--credits must be a positive whole number, not "${credits}"`)
      const account = requireAccount(email)
      deps.credits.topUp({ accountId: account.id, credits, source: 'cli' })
      return repo.findAccount(account.id)!
    },

    /**
     * The account of an OpenID Connect sign-in (an ID token already verified by the caller):
     * 1. the account linked to `subject`, whatever the token's email says now;
     * 2. else, with a verified email, the account of that email, which gets linked to `subject`
     *    (unless it is already linked to another subject of the provider: then null, no takeover);
     * 3. else, with a verified email, a new free account for it, linked to `subject` (SSO users of the
     *    organisation's provider can sign in without an operator creating them first).
     * Without a verified email an unlinked subject gets null: an email is what an account is keyed by.
     */
    signInWithOidc(claims: { subject: string; email?: string; emailVerified?: boolean }): AccountRow | null {
      const linked = repo.findAccountByOidcSubject(claims.subject)
      if (linked) return linked
      const email = claims.email?.trim()
      if (!email || claims.emailVerified !== true || !/^[^\s@]+@[^\s@]+$/.test(email)) return null
      return repo.transaction(() => {
        const again = repo.findAccountByOidcSubject(claims.subject)
        if (again) return again
        const existing = repo.findAccountByEmail(email)
        if (existing) {
          if (existing.oidc_subject && existing.oidc_subject !== claims.subject) return null
          repo.linkOidcSubject(existing.id, claims.subject)
          return repo.findAccount(existing.id)!
        }
        const at = clock.now()
        const id = ids.next('acct')
        repo.insertAccount({ id, email, plan: 'free', grant_period: grantPeriod(at), created_at: at.toISOString() })
        repo.linkOidcSubject(id, claims.subject)
        return repo.findAccount(id)!
      })
    },

    /** The password hash of the account of `email` (for the web sign-in), or null when there is no such account. */
    passwordOf(email: string): { accountId: string; passwordHash: string | null } | null {
      const row = repo.findPasswordByEmail(email)
      return row ? { accountId: row.id, passwordHash: row.password_hash } : null
    },

    /** Stores an account's password hash (argon2id, made by the web module). */
    setPasswordHash(accountId: string, hash: string) {
      repo.setPasswordHash(accountId, hash)
    },

    /** The email of an account, or null when there is no such account. */
    emailOf(accountId: string): string | null {
      return repo.findAccount(accountId)?.email ?? null
    },

    /** The API-key credential check: a live, unrevoked key gives its principal; anything else null. */
    verifyApiKey(token: string): Principal | null {
      if (!token.startsWith(LIVE_PREFIX) && !token.startsWith(SANDBOX_PREFIX)) return null
      const hash = sha256(token)
      const principal = deps.keyCache.get(hash, () => {
        const row = repo.findKeyByHash(hash)
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
          repo.touchKey(principal.credentialId, new Date(t).toISOString())
        }
      }
      return principal
    },

  }
}
