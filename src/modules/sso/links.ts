import type { Clock } from '../../clock'
import type { SsoConfig } from '../../config'
import type { Store } from '../../db/store'
import type { Logger } from '../../log'
import { silentLogger } from '../../log'
import type { AccountsService } from '../accounts/service'
import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'
import { isReservedEmail } from '../workspaces/model'
import { syncGroupMemberships, type SsoWorkspaceMembers } from './group-memberships'
import { createSsoRepo, type SsoRepo } from './repo'

/** Why a sign-in through the provider was refused: the audit log's `reason`, and the page shown. */
export type SsoRefusal =
  | 'flow_missing' | 'state_mismatch' | 'provider_refused' | 'provider_unreachable' | 'token_rejected'
  | 'email_missing' | 'email_unverified' | 'email_reserved' | 'domain_not_allowed' | 'group_not_allowed' | 'account_linked_elsewhere'

export interface SsoRefused { ok: false; reason: SsoRefusal; status: number; title: string; message: string }
export type SsoSignIn = { ok: true; accountId: string; email: string; created: boolean } | SsoRefused

/**
 * How a person reached notesvc with the provider's word: the browser's sign-in (every outcome is
 * recorded in the audit log) or an ID token sent as an API bearer (checked on every request, so only
 * what it writes is recorded: an account made, a link made).
 */
export type SsoVia = 'browser' | 'id_token'

export type SsoLinks = ReturnType<typeof createSsoLinks>

/** Thrown inside the linking transaction so that an account made in it is rolled back. */
class LinkedElsewhere extends Error {
  constructor(readonly accountId: string) { super('account linked to another subject') }
}

/**
 * The one owner of the link between a person at the organisation's OpenID Connect provider (issuer
 * and subject) and a notesvc account, and of who may use notesvc through the provider at all: used by
 * the browser's sign-in (./service.ts) and by ID tokens sent as bearers (../oidc/id-token.ts), so
 * both follow the same rules (docs/decisions.md, "Single sign-on in the browser"):
 * 1. the allowed domains and groups, checked first, linked or not, before anything is written;
 * 2. the account linked to the issuer and subject in `sso_identities`; else the account whose
 *    `accounts.oidc_subject` (the ID-token link of migration 3, kept for accounts linked before)
 *    names the subject, whose link then moves into `sso_identities`;
 * 3. else, with a verified email, that email's account, or a new one on `defaultPlan`, linked;
 *    never an account linked (by either table) to another subject, nor an email of the reserved
 *    `workspace.invalid` (a team workspace's row carries one);
 * 4. at a browser sign-in, the person's team memberships follow their groups' mappings
 *    (./group-memberships.ts), in the sign-in's transaction.
 */
export function createSsoLinks(deps: {
  store: Store
  config: SsoConfig
  issuer: string
  accounts: Pick<AccountsService, 'accountOfEmail' | 'createAccount' | 'accountOfOidcSubject'>
  audit: Pick<AuditService, 'record'>
  clock: Clock
  log?: Logger
  repo?: SsoRepo
  /** the workspaces' members and group mappings (absent: no group sync) */
  workspaces?: SsoWorkspaceMembers
}) {
  const { config, issuer, accounts, audit, clock } = deps
  const log = deps.log ?? silentLogger
  const repo = deps.repo ?? createSsoRepo(deps.store)
  const name = config.providerName

  const refuse = (reason: SsoRefusal, status: number, title: string, message: string): SsoRefused => ({ ok: false, reason, status, title, message })
  const noEmail = () => refuse('email_missing', 403, `No email address from ${name}`,
    `${name} did not share your email address, which notesvc needs to find or create your account. Ask your administrator to release the email claim (the "email" scope) to notesvc at ${name}.`)
  const unverified = (email: string) => refuse('email_unverified', 403, 'Email address not verified',
    `${name} says your email address ${email} is not verified, so notesvc cannot match it to an account. Ask your administrator to verify your email address at ${name}, then sign in again.`)
  const linkedElsewhere = (email: string) => refuse('account_linked_elsewhere', 409, 'Account linked to someone else',
    `The notesvc account of ${email} is already linked to another person at ${name}, so you were not signed in. Ask your administrator to check who at ${name} owns ${email}.`)

  const reserved = (email: string) => refuse('email_reserved', 403, 'Email address reserved',
    `${name} gave your email address as ${email}, which ends in @workspace.invalid, a name notesvc keeps for team workspaces, so you were not signed in. Ask your administrator to give you a real email address at ${name}.`)

  /** The groups a person is in, from the configured claim (`groups` when none is set: a group mapping reads it). An array of names, or one name. */
  function groupsOf(claims: Record<string, unknown>): string[] {
    const v = claims[config.groupsClaim ?? 'groups']
    if (typeof v === 'string') return [v]
    return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : []
  }

  /** Who may not use notesvc at all, whatever their account: checked before anything is found or written. */
  function restriction(email: string | null, verified: boolean, claims: Record<string, unknown>): SsoRefused | null {
    if (config.allowedGroups.length > 0 && !groupsOf(claims).some(g => config.allowedGroups.includes(g))) {
      return refuse('group_not_allowed', 403, 'Not in an allowed group',
        `Your account at ${name} is not in a group allowed to use this notesvc. Ask your administrator to add you to one of these groups at ${name}: ${config.allowedGroups.join(', ')}.`)
    }
    if (config.allowedDomains.length > 0) {
      if (!email) return noEmail()
      if (!verified) return unverified(email)
      if (!config.allowedDomains.includes(email.split('@').pop()!.toLowerCase())) {
        return refuse('domain_not_allowed', 403, 'Email domain not allowed',
          `Your email address ${email} is not in a domain allowed to use this notesvc (${config.allowedDomains.join(', ')}). Ask your administrator to allow your domain, or sign in to ${name} with an account in one of those domains.`)
      }
    }
    return null
  }

  return {
    /**
     * The account of the person the provider's verified `claims` name (`sub`, `email`,
     * `email_verified`, the groups claim), found, linked or made by the rules above, or why not.
     * `origin` is where the request came from (null for a bearer: the verifier does not see it).
     */
    async signIn(claims: Record<string, unknown>, via: SsoVia, origin: AuditOrigin | null = null): Promise<SsoSignIn> {
      const subject = String(claims.sub)
      const email = typeof claims.email === 'string' && /^[^\s@]+@[^\s@]+$/.test(claims.email.trim()) ? claims.email.trim() : null
      // true, or "true" as some providers (Amazon Cognito) send it
      const verified = claims.email_verified === true || claims.email_verified === 'true'
      const actor = { type: 'sso' as const, id: subject }
      const details = (reason: string) => ({ issuer, reason, ...(via === 'id_token' ? { credential: 'id_token' } : {}) })
      /** a refusal of this person: recorded for the browser (once per sign-in), logged for a bearer (once per request) */
      async function refused(r: SsoRefused, accountId: string | null = null): Promise<SsoRefused> {
        if (via === 'browser') await audit.record({ accountId, actor, action: 'signin.failed', origin, details: details(r.reason) })
        else log.info('oidc ID token refused as a bearer', { issuer, subject, reason: r.reason })
        return r
      }

      const linked = await repo.identity(issuer, subject)
      const legacy = linked ? null : await accounts.accountOfOidcSubject(subject)
      const known = linked?.account_id ?? legacy?.id ?? null
      const restricted = restriction(email, verified, claims) ?? (email && isReservedEmail(email) ? reserved(email) : null)
      // a linked person's refusal is in their account's log, where its owner reads it
      if (restricted) return refused(restricted, known)

      const at = clock.now().toISOString()
      /** the browser's sign-in brings the person's team memberships in line with their groups */
      const syncGroups = (accountId: string) => via === 'browser' && deps.workspaces
        ? syncGroupMemberships({ workspaces: deps.workspaces, audit, accountId, groups: groupsOf(claims), actor, origin, at })
        : Promise.resolve()
      if (linked) {
        // a bearer is checked on every request: a read stays a read
        if (via === 'browser') {
          await repo.transaction(async () => {
            await repo.touch(issuer, subject, email, at)
            await syncGroups(linked.account_id)
            await audit.record({ accountId: linked.account_id, actor, action: 'signin.succeeded', origin, details: details('linked') })
          })
        }
        return { ok: true, accountId: linked.account_id, email: email ?? linked.email ?? '', created: false }
      }
      if (!legacy && (!email || !verified)) return refused(email ? unverified(email) : noEmail())

      // find (by the old link, else the email) or make the account, link it, and record it: all or nothing
      try {
        return await repo.transaction(async (): Promise<SsoSignIn> => {
          let account = legacy ?? await accounts.accountOfEmail(email!)
          let created = false
          if (!account) {
            ({ account, created } = await accounts.createAccount(email!, config.defaultPlan))
            if (created) await audit.record({ accountId: account.id, actor, action: 'account.created', target: { type: 'account', id: account.id }, origin, details: { issuer, plan: account.plan } })
          }
          // one person per account at this provider: a second subject with the same email is not let in
          const other = await repo.identityOfAccount(account.id, issuer)
          if ((other && other.subject !== subject) || (account.oidc_subject && account.oidc_subject !== subject)) throw new LinkedElsewhere(account.id)
          // not written: the same link made by another request a moment ago is fine, anything else is not
          if (!(await repo.link({ issuer, subject, account_id: account.id, email, created_at: at, last_signin_at: at }))
            && (await repo.identity(issuer, subject))?.account_id !== account.id) throw new LinkedElsewhere(account.id)
          const reason = legacy ? 'linked' : created ? 'created' : 'matched_email'
          await syncGroups(account.id)
          await audit.record({ accountId: account.id, actor, action: 'signin.succeeded', origin, details: details(reason) })
          return { ok: true, accountId: account.id, email: account.email, created }
        })
      } catch (err) {
        if (!(err instanceof LinkedElsewhere)) throw err
        return refused(linkedElsewhere(email ?? legacy?.email ?? ''), err.accountId)
      }
    },
  }
}
