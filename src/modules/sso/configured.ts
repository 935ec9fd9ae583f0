import type { Clock } from '../../clock'
import type { Config } from '../../config'
import type { Store } from '../../db/store'
import type { Logger } from '../../log'
import type { AccountsService } from '../accounts/service'
import type { AuditService } from '../audit/service'
import type { SsoWorkspaceMembers } from './group-memberships'
import { createSsoLinks, type SsoLinks } from './links'
import { createSsoService, type SsoService } from './service'

/**
 * The links between people at the configured OpenID Connect provider and accounts (./links.ts) when
 * a provider is configured (issuer and client id set), else null: used by the browser's sign-in and
 * by ID tokens sent as bearers, whether or not the browser's sign-in is on.
 */
export function ssoLinksFor(deps: { store: Store; config: Config; accounts: AccountsService; audit: AuditService; clock: Clock; log?: Logger; workspaces?: SsoWorkspaceMembers }): SsoLinks | null {
  const { config } = deps
  if (!config.oidcIssuer || !config.oidcClientId) return null
  return createSsoLinks({ store: deps.store, config: config.sso, issuer: config.oidcIssuer, accounts: deps.accounts, audit: deps.audit, clock: deps.clock, log: deps.log, workspaces: deps.workspaces })
}

/** The single sign-on service when the configuration turns it on (issuer and client id set, NOTESVC_OIDC_SIGNIN not off), else null. */
export function ssoServiceFor(deps: { config: Config; links: SsoLinks | null; clock: Clock; log?: Logger }): SsoService | null {
  const { config, links } = deps
  if (!config.sso.enabled || !config.oidcIssuer || !config.oidcClientId || !links) return null
  return createSsoService({
    config: config.sso, issuer: config.oidcIssuer, clientId: config.oidcClientId, clientSecret: config.oidcClientSecret,
    publicUrl: config.publicUrl, links, clock: deps.clock, log: deps.log,
  })
}
