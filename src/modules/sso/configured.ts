import type { Clock } from '../../clock'
import type { Config } from '../../config'
import type { Store } from '../../db/store'
import type { Logger } from '../../log'
import type { AccountsService } from '../accounts/service'
import type { AuditService } from '../audit/service'
import { createSsoService, type SsoService } from './service'

/** The single sign-on service when the configuration turns it on (issuer and client id set, NOTESVC_OIDC_SIGNIN not off), else null. */
export function ssoServiceFor(deps: { store: Store; config: Config; accounts: AccountsService; audit: AuditService; clock: Clock; log?: Logger }): SsoService | null {
  const { config } = deps
  if (!config.sso.enabled || !config.oidcIssuer || !config.oidcClientId) return null
  return createSsoService({
    store: deps.store, config: config.sso, issuer: config.oidcIssuer, clientId: config.oidcClientId, clientSecret: config.oidcClientSecret,
    publicUrl: config.publicUrl, accounts: deps.accounts, audit: deps.audit, clock: deps.clock, log: deps.log,
  })
}
