import * as oidc from 'openid-client'
import type { Clock } from '../../clock'
import type { SsoConfig } from '../../config'
import { silentLogger, type Logger } from '../../log'
import type { AccountsService } from '../accounts/service'
import type { AuditService } from '../audit/service'
import type { AuditOrigin } from '../audit/model'
import { createSsoRepo, type SsoRepo } from './repo'
import type { Store } from '../../db/store'

/** Where the provider sends the browser back: what the operator registers at the provider as the redirect URI. */
export const SSO_CALLBACK_PATH = '/signin/oidc/callback'
/** Where the "Sign in with …" button goes: it starts the authorization request. */
export const SSO_START_PATH = '/signin/oidc'
/** A failed discovery is retried at most this often, so a provider outage is not hammered per click. */
const DISCOVERY_RETRY_MS = 10_000

/** What the browser keeps between the start and the callback (an HttpOnly cookie, ten minutes). */
export interface SsoFlow {
  state: string
  nonce: string
  verifier: string
  next: string
}

/** Why a sign-in through the provider was refused: the audit log's `reason`, and the page shown. */
export type SsoRefusal =
  | 'flow_missing' | 'state_mismatch' | 'provider_refused' | 'provider_unreachable' | 'token_rejected'
  | 'email_missing' | 'email_unverified' | 'domain_not_allowed' | 'group_not_allowed' | 'account_linked_elsewhere'

export type SsoResult =
  | { ok: true; accountId: string; email: string; created: boolean; next: string }
  | { ok: false; reason: SsoRefusal; status: number; title: string; message: string }

export type SsoService = ReturnType<typeof createSsoService>

/** Thrown inside the linking transaction so that an account made in it is rolled back. */
class LinkedElsewhere extends Error {
  constructor(readonly accountId: string) { super('account linked to another subject') }
}

/**
 * Browser sign-in through the organisation's OpenID Connect provider with openid-client (discovery,
 * authorization code + PKCE S256, state and nonce, ID token and userinfo checks): the account is
 * found by the provider's issuer and subject, else by the verified email (then linked), else made on
 * `defaultPlan` (then linked). The allowed domains and groups are checked before anything is written.
 */
export function createSsoService(deps: {
  store: Store
  config: SsoConfig
  issuer: string
  clientId: string
  clientSecret?: string
  publicUrl: string
  accounts: Pick<AccountsService, 'accountOfEmail' | 'createAccount'>
  audit: Pick<AuditService, 'record'>
  clock: Clock
  log?: Logger
  repo?: SsoRepo
}) {
  const { config, issuer, accounts, audit, clock } = deps
  const log = deps.log ?? silentLogger
  const repo = deps.repo ?? createSsoRepo(deps.store)
  const redirectUri = `${deps.publicUrl}${SSO_CALLBACK_PATH}`
  const name = config.providerName

  let discovered: Promise<oidc.Configuration> | undefined
  let failedAt = -Infinity
  /** The provider's metadata, discovered once from the issuer (a failure is retried after a pause). */
  function client(): Promise<oidc.Configuration> {
    if (discovered) return discovered
    if (clock.now().getTime() - failedAt < DISCOVERY_RETRY_MS) return Promise.reject(new Error('discovery failed moments ago'))
    const auth = deps.clientSecret ? oidc.ClientSecretBasic(deps.clientSecret) : oidc.None()
    // http:// only when the operator configured an http issuer (a provider on loopback, tests)
    const execute = issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : []
    const p = oidc.discovery(new URL(issuer), deps.clientId, undefined, auth, { execute, timeout: 10 })
    discovered = p
    p.catch(err => {
      if (discovered === p) discovered = undefined
      failedAt = clock.now().getTime()
      log.warn('oidc discovery failed; single sign-on is unavailable until it succeeds', { issuer, error: err })
    })
    return p
  }

  const refuse = (reason: SsoRefusal, status: number, title: string, message: string): SsoResult & { ok: false } => ({ ok: false, reason, status, title, message })
  const unreachable = () => refuse('provider_unreachable', 502, `${name} did not answer`,
    `notesvc could not reach ${name} (${issuer}) to complete the sign-in. Try again in a minute; if it keeps failing, ask your administrator to check that notesvc can reach ${issuer} (notesvc doctor shows it).`)

  /** A refusal of a person the provider named (a subject): in the audit log, under their account when they have one. */
  async function failed(reason: SsoRefusal, subject: string, origin: AuditOrigin, accountId: string | null = null): Promise<void> {
    await audit.record({ accountId, actor: { type: 'sso', id: subject }, action: 'signin.failed', origin, details: { issuer, reason } })
  }

  /**
   * A refusal before the provider named anyone (no flow cookie, another state, the provider's error,
   * a code or ID token refused, the provider unreachable): anyone can cause one with a request, so it
   * is not in the audit log (it would let anyone append rows without limit) but in the log, at debug.
   */
  function anonymous(reason: SsoRefusal, origin: AuditOrigin): void {
    log.debug('oidc sign-in refused before the provider named anyone', { reason, ip: origin.ip ?? null })
  }

  /** The groups a person is in, from the configured claim (an array of names, or one name). */
  function groupsOf(claims: Record<string, unknown>): string[] {
    const v = config.groupsClaim ? claims[config.groupsClaim] : undefined
    if (typeof v === 'string') return [v]
    return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : []
  }

  const noEmail = () => refuse('email_missing', 403, `No email address from ${name}`,
    `${name} did not share your email address, which notesvc needs to find or create your account. Ask your administrator to release the email claim (the "email" scope) to notesvc at ${name}.`)
  const unverified = (email: string) => refuse('email_unverified', 403, 'Email address not verified',
    `${name} says your email address ${email} is not verified, so notesvc cannot match it to an account. Ask your administrator to verify your email address at ${name}, then sign in again.`)

  /** Who may not sign in at all, whatever their account: checked before anything is found or written. */
  function restriction(email: string | null, verified: boolean, claims: Record<string, unknown>): (SsoResult & { ok: false }) | null {
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
    providerName: name,
    redirectUri,

    /** The provider's authorization URL for a new sign-in, and what the browser keeps until the callback. */
    async begin(next: string): Promise<{ url: string; flow: SsoFlow } | SsoResult> {
      let c: oidc.Configuration
      try {
        c = await client()
      } catch {
        return unreachable()
      }
      const flow: SsoFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), next }
      const url = oidc.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: config.scopes,
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      })
      return { url: url.href, flow }
    },

    /**
     * The callback: `search` is the query the provider sent the browser back with, `flow` what the
     * browser kept (null when its cookie is gone). Records the outcome in the audit log.
     */
    async finish(search: string, flow: SsoFlow | null, origin: AuditOrigin): Promise<SsoResult> {
      const params = new URLSearchParams(search)
      if (!flow) {
        anonymous('flow_missing', origin)
        return refuse('flow_missing', 400, 'Sign-in expired',
          `This sign-in through ${name} expired or was started in another browser. Go back to the sign-in page and choose "Sign in with ${name}" again (cookies must be allowed for this site).`)
      }
      const again = `Go back to the sign-in page and choose "Sign in with ${name}" again.`
      if (params.get('state') !== flow.state) {
        anonymous('state_mismatch', origin)
        return refuse('state_mismatch', 400, 'Sign-in not accepted', `The answer from ${name} does not belong to the sign-in this browser started, so it was not accepted. ${again}`)
      }
      const error = params.get('error')
      if (error) {
        anonymous('provider_refused', origin)
        const said = params.get('error_description')
        return refuse('provider_refused', 403, `${name} did not sign you in`, `${name} answered "${error}"${said ? ` (${said.slice(0, 200)})` : ''}. ${again} If it happens again, ask your administrator.`)
      }

      let c: oidc.Configuration
      try {
        c = await client()
      } catch {
        anonymous('provider_unreachable', origin)
        return unreachable()
      }
      let claims: Record<string, unknown>
      try {
        const tokens = await oidc.authorizationCodeGrant(c, new URL(`${redirectUri}?${params}`), {
          pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true,
        })
        claims = { ...tokens.claims()! }
        // Many providers put email and groups only in userinfo (the ID token of a code flow may omit them).
        if (c.serverMetadata().userinfo_endpoint) {
          const info = await oidc.fetchUserInfo(c, tokens.access_token, claims.sub as string)
          claims = { ...claims, ...info, sub: claims.sub }
        }
      } catch (err) {
        const network = !(err instanceof oidc.ClientError) && !(err instanceof oidc.ResponseBodyError) && !(err instanceof oidc.AuthorizationResponseError)
        log.warn('oidc sign-in: the code exchange or its ID token was refused', { issuer, error: err })
        anonymous(network ? 'provider_unreachable' : 'token_rejected', origin)
        return network ? unreachable() : refuse('token_rejected', 400, 'Sign-in not accepted',
          `The answer from ${name} could not be verified (its ID token does not match this sign-in, or the code was already used), so nobody was signed in. ${again}`)
      }

      const subject = String(claims.sub)
      const email = typeof claims.email === 'string' && /^[^\s@]+@[^\s@]+$/.test(claims.email.trim()) ? claims.email.trim() : null
      // true, or "true" as some providers (Amazon Cognito) send it
      const verified = claims.email_verified === true || claims.email_verified === 'true'
      const linked = await repo.identity(issuer, subject)
      const refused = restriction(email, verified, claims)
      if (refused) {
        // a linked person's refusal is in their account's log, where its owner reads it
        await failed(refused.reason, subject, origin, linked?.account_id ?? null)
        return refused
      }

      const at = clock.now().toISOString()
      if (linked) {
        await repo.transaction(async () => {
          await repo.touch(issuer, subject, email, at)
          await audit.record({ accountId: linked.account_id, actor: { type: 'sso', id: subject }, action: 'signin.succeeded', origin, details: { issuer, reason: 'linked' } })
        })
        return { ok: true, accountId: linked.account_id, email: email ?? linked.email ?? '', created: false, next: flow.next }
      }
      if (!email || !verified) {
        const r = email ? unverified(email) : noEmail()
        await failed(r.reason, subject, origin)
        return r
      }

      // find or make the account, link it, and record it: all or nothing
      try {
        return await repo.transaction(async (): Promise<SsoResult> => {
          let account = await accounts.accountOfEmail(email)
          let created = false
          if (!account) {
            ({ account, created } = await accounts.createAccount(email, config.defaultPlan))
            if (created) await audit.record({ accountId: account.id, actor: { type: 'sso', id: subject }, action: 'account.created', target: { type: 'account', id: account.id }, origin, details: { issuer, plan: account.plan } })
          }
          // one person per account at this provider: a second subject with the same email is not let in
          if (await repo.identityOfAccount(account.id, issuer) || !(await repo.link({ issuer, subject, account_id: account.id, email, created_at: at, last_signin_at: at }))) {
            throw new LinkedElsewhere(account.id)
          }
          await audit.record({ accountId: account.id, actor: { type: 'sso', id: subject }, action: 'signin.succeeded', origin, details: { issuer, reason: created ? 'created' : 'matched_email' } })
          return { ok: true, accountId: account.id, email: account.email, created, next: flow.next }
        })
      } catch (err) {
        if (!(err instanceof LinkedElsewhere)) throw err
        await failed('account_linked_elsewhere', subject, origin, err.accountId)
        return refuse('account_linked_elsewhere', 409, 'Account linked to someone else',
          `The notesvc account of ${email} is already linked to another person at ${name}, so you were not signed in. Ask your administrator to check who at ${name} owns ${email}.`)
      }
    },
  }
}
