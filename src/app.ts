import { Elysia } from 'elysia'
import type { Config } from './config'
import type { Clock } from './clock'
import type { IdGenerator } from './ids'
import type { Logger } from './log'
import type { Services } from './services'
import { createAdmission, type CredentialVerifier } from './http/admission'
import { authGuard } from './http/auth'
import { accessLog } from './http/access-log'
import { keptListAnswer } from './modules/notes/kept-page-answer'
import { errorHandler, methodsForPathFrom, type MethodsForPath } from './http/error-handler'
import { escapedErrorAnswer } from './http/escaped-error'
import { operationRoutes } from './http/operation-routes'
import { discoveryRoutes } from './modules/discovery'
import { uploadsRoutes } from './modules/uploads'
import { webRoutes } from './modules/web'
import { ssoRoutes } from './modules/sso'
import { SSO_START_PATH } from './modules/sso/service'
import { sessionCredential, sessionPrincipal } from './modules/web/api-session'
import { oauthAccessTokenVerifier, oauthRoutes } from './modules/oauth'
import { mcpRoutes } from './modules/mcp'
import { idTokenVerifiers } from './modules/oidc/id-token'
import { metricsRoutes } from './modules/metrics'
import { sharingRoutes } from './modules/sharing/routes'
import { OPERATIONS, OPERATION_TABLE } from './operations'
import { createRealtimeRoute } from './modules/live/realtime-route'
import { browserStreamCredential } from './modules/live/browser-credential'
import type { LiveRecognizerFactory } from './modules/live/recognizer'

export interface AppDeps {
  config: Config
  clock: Clock
  ids: IdGenerator
  log: Logger
  services: Services
  /** extra credential checks (OAuth access tokens, ID tokens) tried after API keys */
  verifiers?: CredentialVerifier[]
  /**
   * The live engine's recognizers: with them, GET /v1/realtime is served (modules/live, on Bun.serve's
   * WebSockets through http/listen.ts); without them the path is not found. `serve` gives the
   * PocketSphinx live engine's (modules/live/engine-recognizer.ts).
   */
  liveRecognizers?: LiveRecognizerFactory
}

/** Where browsers PUT uploads: this server, and the storage's own origins (an S3 endpoint, or AWS's). */
function uploadOrigins(config: Config, services: Services): string[] {
  return [new URL(config.publicUrl).origin, ...services.storage.browserOrigins]
}

/** Assembles the HTTP application from the modules. */
export function createApp(deps: AppDeps) {
  const { config, services, log } = deps
  // API keys, then OAuth access tokens, then ID tokens of the configured OpenID Connect provider (when
  // NOTESVC_OIDC_ISSUER is set), then whatever the caller adds: on the API and on /mcp alike.
  const verifiers: CredentialVerifier[] = [
    services.accounts.verifyApiKey,
    oauthAccessTokenVerifier(services.oauth),
    ...idTokenVerifiers({ config, services, clock: deps.clock, log }),
    ...(deps.verifiers ?? []),
  ]
  // API keys the key cache holds are admitted without a turn through promises (admitNow)
  const admission = createAdmission(verifiers, services.rateLimiter, OPERATION_TABLE, services.accounts.cachedApiKey)
  // The web library calls the same operations with its session (src/modules/web/api-session.ts).
  const session = sessionCredential(services.web.sessions, config.publicUrl, services.workspacesRepo.roleOf, services.workspacesRepo.touchMember, () => deps.clock.now().getTime())
  const guard = authGuard(admission, { session, server: () => app.server })
  let methodsForPath: MethodsForPath | undefined
  // Request ids need only be unique, and are made for every request: a UUID is the cheapest.
  const newRequestId = () => `req_${crypto.randomUUID()}`

  const app: Elysia<any, any, any, any, any, any, any> = new Elysia({ name: 'notesvc', normalize: false })
    .use(errorHandler({
      docsUrl: config.docsUrl,
      log,
      newRequestId,
      methodsForPath: () => (methodsForPath ??= methodsForPathFrom(app.routes)),
    }))
    // before the routes, so that its hook applies to them (src/http/access-log.ts)
    .use(config.accessLog ? accessLog(log) : new Elysia({ name: 'notesvc-no-access-log' }))
    .use(guard)
    // every operation of the API, each from its one definition (src/operations.ts)
    .use(operationRoutes(guard, OPERATIONS, services))
    .use(discoveryRoutes({ config, operations: OPERATIONS }))
    .use(uploadsRoutes({ guard, uploads: services.uploads }))
    .use(webRoutes({ web: services.web, accounts: services.accounts, usage: services.usage, uploads: services.uploads, session, uploadOrigins: uploadOrigins(config, services), liveStreams: deps.liveRecognizers !== undefined, sharing: config.sharing, publicUrl: config.publicUrl, audit: services.audit, retention: services.retention, workspaces: services.workspacesRepo, workspaceKeys: services.workspaces, signInMethods: { password: config.passwordSignIn, sso: services.sso ? { name: services.sso.providerName, startPath: SSO_START_PATH } : undefined } })(guard))
    .use(services.sso ? ssoRoutes({ sso: services.sso, sessions: services.web.sessions, publicUrl: config.publicUrl }) : new Elysia({ name: 'notesvc-no-sso' }))
    .use(oauthRoutes({ service: services.oauth, sessions: services.web.sessions, publicUrl: config.publicUrl, log, admission })(guard))
    .use(mcpRoutes({ config, services, log, admission, operations: OPERATIONS })(guard))
    .use(metricsRoutes({ metrics: services.metrics, token: config.metricsToken }))
    // share links' pages (/s/:token): no sign-in, nothing of the library
    .use(sharingRoutes({ sharing: services.sharing, uploads: services.uploads }))

  // The repeated first page, answered before routing when all it needs is in memory
  // (modules/notes/kept-page-answer.ts). It stands in for the hooks above: a hook added for every
  // request must be added there too (its test compares the two answers).
  const realtime = deps.liveRecognizers
    ? createRealtimeRoute({ admission, docsUrl: config.docsUrl, recognizers: deps.liveRecognizers, streams: services.live, publicUrl: config.publicUrl, limits: config.live,
      browserSession: browserStreamCredential(sessionPrincipal(services.web.sessions, config.publicUrl, services.workspacesRepo.roleOf, services.workspacesRepo.touchMember, () => deps.clock.now().getTime())) })
    : undefined
  return Object.assign(app, { realtime, answerAtOnce: keptListAnswer({ admission, notes: services.notes, newRequestId, accessLog: config.accessLog ? log : undefined }),
    // every response counted for GET /metrics when it is on (NOTESVC_METRICS_TOKEN), by http/listen.ts
    observe: config.metricsToken ? (label: string | undefined, status: number, seconds: number) => services.metrics.request(label ?? 'unmatched', status, seconds) : undefined,
    // an error that escaped all of the above, answered by http/listen.ts as the envelope's 500
    escaped: escapedErrorAnswer({ docsUrl: config.docsUrl, log, accessLog: config.accessLog ? log : undefined, newRequestId }),
  })
}

/**
 * What `notesvc worker` serves when NOTESVC_METRICS_PORT is set (it has no API): GET /metrics alone,
 * behind the same token, with the same envelope for what fails (404 for any other path).
 */
export function createMetricsApp(deps: Pick<AppDeps, 'config' | 'log' | 'services'>) {
  const app = new Elysia({ name: 'notesvc-metrics-only', normalize: false })
    .use(errorHandler({ docsUrl: deps.config.docsUrl, log: deps.log, newRequestId: () => `req_${crypto.randomUUID()}`, methodsForPath: () => path => (path === '/metrics' ? ['GET', 'HEAD'] : []) }))
    .use(metricsRoutes({ metrics: deps.services.metrics, token: deps.config.metricsToken }))
  return Object.assign(app, { escaped: escapedErrorAnswer({ docsUrl: deps.config.docsUrl, log: deps.log }) })
}
