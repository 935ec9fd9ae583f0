/** Browser sign-in settings: single sign-on through an OpenID Connect provider (NOTESVC_OIDC_*) and passwords (NOTESVC_PASSWORD_SIGNIN). */
import { ConfigError, oneOf, type Env } from './environment'

/** NOTESVC_OIDC_ISSUER, kept as written once it is an http(s) URL. */
export function oidcIssuer(value: string | undefined): string | undefined {
  if (!value) return undefined
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError(`NOTESVC_OIDC_ISSUER=${value} is not a URL; set it to the provider's issuer, e.g. https://accounts.example.com`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`NOTESVC_OIDC_ISSUER=${value} is not an http(s) URL; set it to the provider's issuer, e.g. https://accounts.example.com`)
  }
  // Kept as written (not trimmed): the "iss" claim must equal it exactly.
  return value
}

/** Browser sign-in through the organisation's OpenID Connect provider (src/modules/sso). */
export interface SsoConfig {
  /** on when NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID are set, unless NOTESVC_OIDC_SIGNIN=off */
  enabled: boolean
  /** the button's "Sign in with …" (NOTESVC_OIDC_PROVIDER_NAME; default the issuer's host) */
  providerName: string
  /** the scopes asked for (NOTESVC_OIDC_SCOPES; default `openid email profile`) */
  scopes: string
  /** lower-case domains an email must be in (NOTESVC_OIDC_ALLOWED_DOMAINS); empty: any */
  allowedDomains: string[]
  /** the claim that lists a person's groups (NOTESVC_OIDC_GROUPS_CLAIM; `groups` when unset), read by the allowed groups and the workspaces' group mappings */
  groupsClaim?: string
  /** a person must be in one of these (NOTESVC_OIDC_ALLOWED_GROUPS); empty: any */
  allowedGroups: string[]
  /** the plan of an account made at its first sign-in (NOTESVC_OIDC_DEFAULT_PLAN; default free) */
  defaultPlan: 'free' | 'pro'
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map(s => s.trim()).filter(Boolean)
}

/** The SSO settings; a value that cannot work stops the start with what to set. */
export function ssoConfig(env: Env, issuer: string | undefined): SsoConfig {
  const clientId = env.NOTESVC_OIDC_CLIENT_ID || undefined
  const signIn = oneOf('NOTESVC_OIDC_SIGNIN', env.NOTESVC_OIDC_SIGNIN, ['on', 'off'] as const, 'on')
  const allowedDomains = list(env.NOTESVC_OIDC_ALLOWED_DOMAINS).map(d => d.toLowerCase().replace(/^@/, ''))
  for (const d of allowedDomains) {
    if (!DOMAIN.test(d)) throw new ConfigError(`NOTESVC_OIDC_ALLOWED_DOMAINS: "${d}" is not a domain; write the domains people's emails end in, comma-separated, e.g. example.com,example.org`)
  }
  const allowedGroups = list(env.NOTESVC_OIDC_ALLOWED_GROUPS)
  const groupsClaim = env.NOTESVC_OIDC_GROUPS_CLAIM?.trim() || (allowedGroups.length ? 'groups' : undefined)
  const scopes = (env.NOTESVC_OIDC_SCOPES || 'openid email profile').trim().split(/\s+/)
  if (!scopes.includes('openid')) throw new ConfigError(`NOTESVC_OIDC_SCOPES=${env.NOTESVC_OIDC_SCOPES} lacks "openid"; set it to space-separated scopes that include openid and email, e.g. "openid email profile"`)
  const restricted = allowedDomains.length > 0 || allowedGroups.length > 0
  if (restricted && (!issuer || !clientId)) {
    throw new ConfigError('NOTESVC_OIDC_ALLOWED_DOMAINS and NOTESVC_OIDC_ALLOWED_GROUPS restrict single sign-on, which is off; set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID too, or unset them')
  }
  return {
    enabled: Boolean(issuer && clientId) && signIn === 'on',
    providerName: env.NOTESVC_OIDC_PROVIDER_NAME?.trim() || (issuer ? new URL(issuer).host : ''),
    scopes: scopes.join(' '),
    allowedDomains,
    groupsClaim,
    allowedGroups,
    defaultPlan: oneOf('NOTESVC_OIDC_DEFAULT_PLAN', env.NOTESVC_OIDC_DEFAULT_PLAN, ['free', 'pro'] as const, 'free'),
  }
}

/** NOTESVC_PASSWORD_SIGNIN; off only when single sign-on is on, or nobody could sign in to the browser. */
export function passwordSignIn(env: Env, sso: SsoConfig): boolean {
  const on = oneOf('NOTESVC_PASSWORD_SIGNIN', env.NOTESVC_PASSWORD_SIGNIN, ['on', 'off'] as const, 'on') === 'on'
  if (!on && !sso.enabled) {
    throw new ConfigError('NOTESVC_PASSWORD_SIGNIN=off leaves no way to sign in to the browser: set NOTESVC_OIDC_ISSUER and NOTESVC_OIDC_CLIENT_ID (single sign-on) first, or set NOTESVC_PASSWORD_SIGNIN=on')
  }
  return on
}
