import { Elysia, StatusMap } from 'elysia'
import type { Logger } from '../log'
import type { Principal } from './principal'

/** One access-log line: what was asked, of which route, by whom, with what answer, how fast. */
export type AccessLine = {
  method: string
  /** the route's template (`/v1/notes/:id`), never the path itself: ids and query strings stay out */
  route: string
  status: number
  durationMs: number
  requestId: string | undefined
  /** the account and the credential's id (a key's id, never the key), when one was admitted */
  accountId?: string
  credentialId?: string
} & Record<string, unknown>

export function accessLine(method: string, route: string, status: number, started: number, requestId: string | undefined, principal: Principal | null | undefined): AccessLine {
  const line: AccessLine = { method, route, status, durationMs: Math.round((performance.now() - started) * 100) / 100, requestId }
  if (principal) {
    line.accountId = principal.accountId
    line.credentialId = principal.credentialId
  }
  return line
}

/** A status as Elysia's `set.status` may hold it (a number, or a name such as 'Created'), as a number. */
function statusOf(responseValue: unknown, setStatus: unknown): number {
  if (responseValue instanceof Response) return responseValue.status
  if (typeof setStatus === 'number') return setStatus
  if (typeof setStatus === 'string') return (StatusMap as Record<string, number>)[setStatus] ?? 200
  return 200
}

/**
 * NOTESVC_ACCESS_LOG: one JSON line per request, written after the response (method, route template,
 * status, duration, request id, account and credential id; no path, query, header or body, so no id
 * typed by a user, token or key ends up in the log). It must be used before the routes: an Elysia hook
 * applies to the routes added after it (registered after them, it logged only the 404s and 405s).
 * Requests that never reach a route (unknown paths) carry the route `*`.
 */
export function accessLog(log: Logger) {
  const started = new WeakMap<Request, number>()
  return new Elysia({ name: 'notesvc-access-log' })
    .onRequest(({ request }) => {
      started.set(request, performance.now())
    })
    .onAfterResponse({ as: 'global' }, ctx => {
      const { request, set, route, responseValue } = ctx as typeof ctx & { responseValue: unknown; principal?: Principal | null }
      const principal = (ctx as { principal?: Principal | null }).principal
      log.info('request', accessLine(request.method, route || '*', statusOf(responseValue, set.status), started.get(request) ?? performance.now(), set.headers['x-request-id'] as string | undefined, principal))
    })
}
