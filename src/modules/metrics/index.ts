import { Elysia } from 'elysia'
import { bearerToken } from '../../http/auth'
import { ApiError } from '../../http/errors'
import { safeEqual } from '../../crypto/digest'
import type { Metrics } from './registry'

/**
 * GET /metrics: this process's metrics in the Prometheus text format, for a scraper holding the
 * metrics token (NOTESVC_METRICS_TOKEN, `Authorization: Bearer <token>`). Without a token configured
 * the route answers 404, as if it did not exist; with a missing or wrong token, 401. The token is
 * checked here only: it is no API credential (admission never sees it), and an API key opens nothing
 * here. Outside the operations table: it is no operation of the API (no scopes, credits or rate class,
 * not in the OpenAPI document or MCP), as the sign-in pages are not.
 */
export function metricsRoutes(deps: { metrics: Metrics; token: string | undefined }) {
  const { metrics, token } = deps
  return new Elysia({ name: 'metrics-routes' }).get('/metrics', async ({ request, set }) => {
    if (!token) throw new ApiError('not_found', 'GET /metrics is off on this server; its operator turns it on by setting NOTESVC_METRICS_TOKEN to a random secret (at least 16 characters) and scrapes with `Authorization: Bearer <that secret>`.')
    const sent = bearerToken(request.headers.get('authorization') ?? undefined)
    if (!sent || !safeEqual(sent, token)) {
      throw new ApiError('invalid_token', sent
        ? 'The metrics token is wrong: send the value of the server\'s NOTESVC_METRICS_TOKEN as `Authorization: Bearer <token>` (API keys are not accepted here).'
        : 'GET /metrics needs the metrics token: send the value of the server\'s NOTESVC_METRICS_TOKEN as `Authorization: Bearer <token>`.', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } })
    }
    const { text, contentType } = await metrics.exposition()
    set.headers['content-type'] = contentType
    set.headers['cache-control'] = 'no-store'
    return text
  })
}
