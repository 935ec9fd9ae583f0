/** What Elysia hands a handler as `server`: enough to ask for the peer's address. */
export type PeerServer = { requestIP(r: Request): { address: string } | null } | null | undefined

/**
 * The address of the client that sent the request, as the socket sees it; `local` when there is no
 * socket (a request handed to `app.handle` in-process). Public operations, OAuth endpoints and sign-in
 * attempts are counted per this address.
 */
export function clientAddress(server: PeerServer, request: Request): string {
  return server?.requestIP(request)?.address ?? 'local'
}
