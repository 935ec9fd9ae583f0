import { clientAddress, type PeerServer } from './client-address'
import type { Principal } from './principal'
import type { SandboxScenario } from './sandbox-scenarios'

/** Where a call came from, as its transport knows it: the client's address and user agent (null when unknown). */
export interface CallOrigin {
  ip: string | null
  userAgent: string | null
}

/**
 * Who calls an operation, as its handler is given it by the transport (an HTTP request, an MCP tool
 * call): the admitted principal (null only for the public operations), where the call came from
 * (read when asked: only what the audit log records needs it), and what admission's rate-limit
 * statement read alongside its count (Admitted.alongside: the notes' revision counter on PostgreSQL).
 */
export interface Caller<P extends Principal | null = Principal> {
  readonly principal: P
  readonly alongside: string | undefined
  origin(): CallOrigin
  /** the request's `If-Match` header (HTTP); null when none was sent or the transport has none (MCP) */
  ifMatch(): string | null
  /** the sandbox scenario a sandbox key's `Notesvc-Scenario` header names (HTTP); absent or null otherwise */
  scenario?(): SandboxScenario | null
}

/** The origin of an HTTP request: the socket's address (src/http/client-address.ts) and its User-Agent. */
export function requestOrigin(server: PeerServer, request: Request): CallOrigin {
  return { ip: clientAddress(server, request), userAgent: request.headers.get('user-agent') }
}

/** A caller whose origin is already known (an MCP request's, read once for all its tool calls). */
export function knownCaller(principal: Principal, origin: CallOrigin): Caller {
  return { principal, alongside: undefined, origin: () => origin, ifMatch: () => null }
}
