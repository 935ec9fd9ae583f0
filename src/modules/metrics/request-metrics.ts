import { Elysia } from 'elysia'
import { statusOf } from '../../http/access-log'
import type { Metrics } from './registry'

/** the operation label of requests no route answered (unknown paths): never the path itself */
export const UNMATCHED = 'unmatched'

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * The `operation` label of a request: the operation id of the operations table (`listNotes`), else
 * the route template outside the API (`/signin`, `/v1/uploads/:id/file`, `/mcp`), else `unmatched`;
 * never a path holding an id. Remembered per route template and method (a bounded set: the routes).
 */
export function operationLabels(operationOf: (method: string, route: string) => string | undefined) {
  const known = new Map<string, Map<string, string>>()
  return (method: string, route: string | undefined): string => {
    if (!route) return UNMATCHED
    let byMethod = known.get(route)
    let label = byMethod?.get(method)
    if (label !== undefined) return label
    label = operationOf(method === 'HEAD' ? 'GET' : method, route) ?? route
    if (!METHODS.has(method)) return label // a method no route serves: not remembered
    if (byMethod === undefined) known.set(route, (byMethod = new Map()))
    byMethod.set(method, label)
    return label
  }
}

const STARTED = Symbol('notesvc.metrics.started')

/**
 * Counts every request Elysia answers in the metrics, with its latency (from the request read to the
 * response handed to the server), after the response. Used before the routes, like the access log
 * (an Elysia hook applies to the routes added after it). The kept first page, answered before Elysia,
 * is counted by its own answer (modules/notes/kept-page-answer.ts).
 */
export function requestMetrics(metrics: Metrics, operationOf: (method: string, route: string) => string | undefined) {
  const label = operationLabels(operationOf)
  return new Elysia({ name: 'notesvc-request-metrics' })
    .onRequest(ctx => {
      ;(ctx as unknown as Record<symbol, number>)[STARTED] = performance.now()
    })
    .onAfterResponse({ as: 'global' }, ctx => {
      const { request, set, route, responseValue } = ctx as typeof ctx & { responseValue: unknown }
      const started = (ctx as unknown as Record<symbol, number | undefined>)[STARTED]
      metrics.request(label(request.method, route), statusOf(responseValue, set.status), started === undefined ? 0 : (performance.now() - started) / 1000)
    })
}
