import type { Clock } from '../../clock'
import type { ReadCache } from '../../db/read-cache'
import type { IdGenerator } from '../../ids'
import type { Principal } from '../../http/admission'
import type { AccountRow, AccountsRepo } from './repo'
import { commandLine } from '../../command-name'
import { grantPeriod, isPlan, PLANS } from '../credits/model'
import type { CreditsService } from '../credits/service'
import type { AuditService } from '../audit/service'
import { OPERATOR, type AuditBy, type AuditEventInput } from '../audit/model'
import { createApiKeys } from './api-keys'
import { createApiKeyVerifier } from './key-verification'
import { AccountError, type Plan } from './model'
import { isReservedEmail } from '../workspaces/model'

export { AccountError, parseScopes, type KeyInfo, type Plan } from './model'
export { keyCacheFor } from './key-verification'

export type AccountsService = ReturnType<typeof createAccountsService>

const isEmail = (s: string) => /^[^\s@]+@[^\s@]+$/.test(s)

/** Team workspaces' rows carry `<id>@workspace.invalid` (workspaces/model.ts teamEmail): no person may sign up with such an email. */
function refuseReservedEmail(email: string): void {
  if (isReservedEmail(email)) throw new AccountError(`"${email}" is reserved for team workspaces (…@workspace.invalid); use the person's own email address`)
}

/**
 * Accounts (made, found, their plan, credits bought, password), their API keys (api-keys.ts) and the
 * API-key check of every request (key-verification.ts).
 */
export function createAccountsService(deps: { repo: AccountsRepo; clock: Clock; ids: IdGenerator; keyCache: ReadCache<Principal | null>; credits: CreditsService; audit?: Pick<AuditService, 'recordBy'> }) {
  const { repo, clock, ids } = deps
  /** Appends an event to the audit log, in the calling transaction (the change it records). */
  const record = (by: AuditBy, e: Omit<AuditEventInput, 'actor' | 'origin'>) => deps.audit?.recordBy(by, e) ?? Promise.resolve()

  /** The account of `email`, created (on `plan`, else free) if there is none; an existing one moves to `plan` when given. */
  async function ensureAccount(email: string, plan?: Plan, by: AuditBy = OPERATOR): Promise<AccountRow> {
    const normalized = email.trim()
    if (!isEmail(normalized)) throw new AccountError(`"${email}" is not an email address; pass --email you@example.com`)
    refuseReservedEmail(normalized)
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

  const keys = createApiKeys({ repo, clock, ids, keyCache: deps.keyCache, record, ensureAccount, requireAccount })
  const verifier = createApiKeyVerifier({ repo, clock, keyCache: deps.keyCache })

  return {
    ensureAccount,
    requireAccount,
    isEmpty: async () => (await repo.countAccounts()) === 0,
    /** Every account's id, a page at a time, in id order after `after` ('' for the first page). */
    accountIdsAfter: (after: string, limit: number) => repo.accountIdsAfter(after, limit),

    createFirstStartOwner: keys.createFirstStartOwner,
    createKey: keys.createKey,
    createWorkspaceKey: keys.createWorkspaceKey,
    /** forgets every verified key of this node (after keys were revoked outside revokeKey*) */
    forgetVerifiedKeys: () => deps.keyCache.forget(),
    listKeys: keys.listKeys,
    revokeKey: keys.revokeKey,
    listKeysOf: keys.listKeysOf,
    revokeKeyOf: keys.revokeKeyOf,

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
      if (!isEmail(normalized)) throw new AccountError(`"${email}" is not an email address`)
      refuseReservedEmail(normalized)
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

    cachedApiKey: verifier.cachedApiKey,
    verifyApiKey: verifier.verifyApiKey,
  }
}
