import type { Store } from '../../db/store'
import type { Clock } from '../../clock'
import { sha256 } from '../../crypto/digest'
import type { AccountsService } from '../accounts/service'
import { AccountError } from '../accounts/service'
import { createSessionService, type SessionService } from './sessions'
import { createWebRepo, type WebRepo } from './repo'
import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'

/** Failed sign-ins are counted over this window. */
const FAILURE_WINDOW_MS = 15 * 60 * 1000
/** At most this many failures per email address in the window, then sign-in for it is refused. */
export const MAX_FAILURES_PER_EMAIL = 5
/** At most this many failures per client address in the window (whatever the emails tried). */
const MAX_FAILURES_PER_CLIENT = 20
const MIN_PASSWORD_LENGTH = 8
const MAX_PASSWORD_LENGTH = 1024

/** argon2id's cost parameters (Bun's defaults when not given: 64 MiB, 2 passes); lowered only by tests. */
export interface PasswordHashCost { memoryCost: number; timeCost: number }

export type SignInResult =
  | { ok: true; accountId: string; setCookie: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number }

export type WebService = ReturnType<typeof createWebService>

/**
 * Password sign-in for the web pages: argon2id hashes (Bun.password), brute-force limits recorded in
 * `sign_in_failures` (per email, stored as a SHA-256, and per client address), and the same argon2id
 * work whether or not the email belongs to an account, so timing does not reveal which emails exist.
 */
export function createWebService(deps: { store: Store; clock: Clock; accounts: AccountsService; secureCookies: boolean; repo?: WebRepo; audit?: Pick<AuditService, 'record'>; passwordHashCost?: PasswordHashCost }) {
  const { clock, accounts } = deps
  const hashOptions = { algorithm: 'argon2id', ...deps.passwordHashCost } as const
  const repo = deps.repo ?? createWebRepo(deps.store)
  const sessions: SessionService = createSessionService({ repo, clock, secureCookies: deps.secureCookies, emailOf: id => accounts.emailOf(id) })

  // A real argon2id hash of a random password, verified against when the email is unknown.
  let dummyHash: Promise<string> | undefined
  const dummy = () => (dummyHash ??= Bun.password.hash(crypto.randomUUID(), hashOptions))

  const emailKey = (email: string) => `email:${sha256(email.trim().toLowerCase())}`
  const clientKey = (address: string) => `client:${address}`

  /**
   * Seconds until the key may try again (0 when it is under its limit), and when its block began: its
   * newest failure, the one that reached the limit (a refused attempt adds none).
   */
  async function blockedFor(key: string, limit: number, now: Date): Promise<{ wait: number; since: string | null }> {
    const since = new Date(now.getTime() - FAILURE_WINDOW_MS).toISOString()
    const row = await repo.failuresSince(key, since)
    if (row.n < limit || !row.oldest) return { wait: 0, since: null }
    // The window slides: the oldest failure in it leaves at oldest + window.
    return { wait: Math.max(1, Math.ceil((Date.parse(row.oldest) + FAILURE_WINDOW_MS - now.getTime()) / 1000)), since: row.newest }
  }

  /**
   * Whether this refused attempt is the first of its block for the email, so the one `rate_limited`
   * event of the block is recorded (then: true). Not each refused attempt: an attacker's thousand posts
   * would bury the account's own audit log. The mark is a row of `sign_in_failures` under its own key
   * (`limited:` and the email's key, counted against no limit), taken in the transaction that records
   * the event; it leaves with the window like the failures.
   */
  async function firstOfBlock(eKey: string, blockedSince: string, now: Date): Promise<boolean> {
    const mark = `limited:${eKey}`
    const last = await repo.failuresSince(mark, new Date(now.getTime() - FAILURE_WINDOW_MS).toISOString())
    if (last.newest !== null && last.newest >= blockedSince) return false
    await repo.addFailure(mark, now.toISOString())
    return true
  }

  return {
    sessions,

    /** Sets (or replaces) an account's password, creating the account if there is none with this email. */
    async setPassword(email: string, password: string): Promise<{ accountId: string; email: string; created: boolean }> {
      if (password.length < MIN_PASSWORD_LENGTH) throw new AccountError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`)
      if (password.length > MAX_PASSWORD_LENGTH) throw new AccountError(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`)
      const existed = await accounts.passwordOf(email.trim())
      const account = await accounts.ensureAccount(email)
      const hash = await Bun.password.hash(password, hashOptions)
      await accounts.setPasswordHash(account.id, hash)
      return { accountId: account.id, email: account.email, created: !existed }
    },

    /** Ends the request's session and records the sign-out, in one transaction; the Set-Cookie that clears the cookie. */
    async signOut(request: Request, accountId: string, origin: AuditOrigin): Promise<string> {
      return deps.store.transaction(async () => {
        await deps.audit?.record({ accountId, actor: { type: 'user', id: accountId }, action: 'signout', target: { type: 'account', id: accountId }, origin })
        return sessions.destroy(request)
      })
    },

    /**
     * Checks email and password; on success starts a session. Failures are counted and limited. Each
     * attempt checked is in the audit log (docs/decisions.md "Audit log"), and of the attempts refused
     * by the limits the first of each block (`rate_limited`): by the account it names, or with no
     * account when the email is unknown; never the password, nor an email typed that is no account's.
     */
    async signIn(email: string, password: string, clientAddress: string, userAgent: string | null = null): Promise<SignInResult> {
      const now = clock.now()
      const eKey = emailKey(email)
      const cKey = clientKey(clientAddress)
      const origin: AuditOrigin = { ip: clientAddress, userAgent }
      const failed = (accountId: string | null, reason: string) =>
        deps.audit?.record({ accountId, actor: { type: 'user', id: accountId }, action: 'signin.failed', target: accountId ? { type: 'account', id: accountId } : null, origin, details: { reason } })
      const blocks = [await blockedFor(eKey, MAX_FAILURES_PER_EMAIL, now), await blockedFor(cKey, MAX_FAILURES_PER_CLIENT, now)].filter(b => b.wait > 0)
      if (blocks.length > 0) {
        // the block began when the later of the limits was reached; one event for it, not one per attempt
        const since = blocks.map(b => b.since ?? '').sort().at(-1)!
        await deps.store.transaction(async () => {
          if (await firstOfBlock(eKey, since, now)) await failed(email.length <= 320 ? ((await accounts.passwordOf(email.trim()))?.accountId ?? null) : null, 'rate_limited')
        }, 'write')
        return { ok: false, reason: 'limited', retryAfterSeconds: Math.max(...blocks.map(b => b.wait)) }
      }

      const row = email.length <= 320 ? await accounts.passwordOf(email.trim()) : null
      const pw = password.slice(0, MAX_PASSWORD_LENGTH)
      let ok = false
      if (row?.passwordHash) {
        ok = await Bun.password.verify(pw, row.passwordHash).catch(() => false)
      } else {
        // Unknown email or no password set: do the same work, then fail.
        await Bun.password.verify(pw, await dummy()).catch(() => false)
      }
      if (!ok || !row) {
        const at = clock.now().toISOString()
        await repo.removeFailuresUpTo(new Date(now.getTime() - FAILURE_WINDOW_MS).toISOString())
        await repo.addFailure(eKey, at)
        await repo.addFailure(cKey, at)
        await failed(row?.accountId ?? null, !row ? 'unknown_account' : row.passwordHash ? 'wrong_password' : 'no_password')
        return { ok: false, reason: 'invalid' }
      }
      await repo.clearFailures(eKey)
      const accountId = row.accountId
      // the session and its sign-in event: both or neither
      const { setCookie } = await deps.store.transaction(async () => {
        const started = await sessions.create(accountId)
        await deps.audit?.record({ accountId, actor: { type: 'user', id: accountId }, action: 'signin.succeeded', target: { type: 'account', id: accountId }, origin, details: { method: 'password' } })
        return started
      })
      return { ok: true, accountId, setCookie }
    },
  }
}
