import type { PeerServer } from '../../http/client-address'
import { requestOrigin, type Caller } from '../../http/caller'
import { actorOf as personOf, type Principal } from '../../http/principal'
import type { AuditActor, AuditBy, AuditOrigin } from './model'

/** Where a request came from: the socket's address (src/http/client-address.ts) and its User-Agent. */
export function originOf(server: PeerServer, request: Request): AuditOrigin {
  return requestOrigin(server, request)
}

/**
 * Who a principal is, for the audit log, by the credential's id: an API key (`key_…`, also over MCP),
 * the signed-in browser (`ses_…`: the person, named by their own account id, whichever workspace
 * they work in), an ID token of the identity provider (`oidc:<subject>`), else an OAuth access token (`tok_…`).
 * The principal's source cannot tell these apart: the browser's session counts as `oauth` there.
 */
function actorOf(p: Principal): AuditActor {
  const id = p.credentialId
  if (id.startsWith('key_')) return { type: 'key', id }
  // the person signed in, not the workspace they work in (X-Notesvc-Workspace)
  if (id.startsWith('ses_')) return { type: 'user', id: personOf(p) }
  if (id.startsWith('oidc:')) return { type: 'sso', id: id.slice(5) }
  return { type: 'oauth', id }
}

/**
 * Whether the principal is the account's own person: a live or sandbox API key or the signed-in
 * browser, not an application acting for them (an OAuth access token) nor an ID token of the
 * identity provider (which any application the provider issued it to may hold). What reads the audit
 * log and changes the retention policy accepts only these.
 */
export function isOwnCredential(p: Principal): boolean {
  const type = actorOf(p).type
  return type === 'key' || type === 'user'
}

/**
 * Who an operation's caller is and where the call came from (an HTTP request's address and user
 * agent, an MCP request's): what a service records an event of an operation with.
 */
export function auditBy(caller: Caller): AuditBy {
  return { actor: actorOf(caller.principal), origin: caller.origin() }
}

/** A signed-in person in the browser (pages outside the API: sign-in, settings, the player). */
export function userBy(accountId: string | null, server: PeerServer, request: Request): AuditBy {
  return { actor: { type: 'user', id: accountId }, origin: originOf(server, request) }
}
