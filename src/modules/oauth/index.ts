import { Elysia } from 'elysia'
import type { authGuard } from '../../http/auth'
import type { Admission, CredentialVerifier } from '../../http/admission'
import { clientAddress, type PeerServer } from '../../http/client-address'
import { originOf } from '../audit/by'
import { fromOwnOrigin } from '../../http/origin'
import { ApiError, knownApiError } from '../../http/errors'
import { BodyTooLargeError, readTextLimited } from '../../http/body-limit'
import { jsonShapeIssue, shapeMessage } from '../../http/body-shape'
import { readForm } from '../../http/form-body'
import { formTextDetails, textDetails } from '../../http/text-check'
import type { Logger } from '../../log'
import type { SessionService } from '../web/sessions'
import { SIGN_IN_PATH } from '../web/sessions'
import { consentPage, errorPage, OAUTH_STYLESHEET, PAGE_HEADERS } from './pages'
import { OAuthError, type OAuthService } from './service'
import { safeEqual } from '../../crypto/digest'

export { createOAuthService, OAuthError, type OAuthService } from './service'

/** Request bodies of these endpoints are small: metadata, or a handful of form fields. */
const MAX_BODY_BYTES = 64 * 1024
const AUTHORIZE_FIELDS = ['client_id', 'redirect_uri', 'response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'resource'] as const

/** JSON endpoints may be called from browser-based clients (PKCE public clients, MCP inspectors). */
const CORS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, mcp-protocol-version',
  'access-control-max-age': '600',
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', pragma: 'no-cache', ...CORS, ...headers },
  })
}

function oauthError(e: OAuthError): Response {
  return json({ error: e.error, error_description: e.description }, e.status, e.headers)
}

function html(body: string, status = 200): Response {
  return new Response(body, { status, headers: PAGE_HEADERS })
}

function redirect(location: string, status = 302): Response {
  return new Response(null, { status, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })
}

/** An ApiError of the shared body readers (http/form-body.ts, body-shape.ts) in OAuth's error format. */
function asOAuthError(err: unknown): unknown {
  if (err instanceof BodyTooLargeError) return new OAuthError('invalid_request', `The body is larger than ${MAX_BODY_BYTES} bytes; these endpoints take a few fields.`)
  if (err instanceof ApiError && err.code === 'invalid_request') return new OAuthError('invalid_request', err.message)
  return err
}

async function readBody(request: Request): Promise<string> {
  try {
    return await readTextLimited(request, MAX_BODY_BYTES)
  } catch (err) {
    throw asOAuthError(err)
  }
}

/** A form, its fields counted before it is parsed and their text checked (http/form-body.ts). */
async function readOAuthForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded.')
  try {
    return await readForm(request, { limit: MAX_BODY_BYTES })
  } catch (err) {
    throw asOAuthError(err)
  }
}

/** The query of GET /oauth/authorize, its text checked as a form's is. */
function authorizeQuery(request: Request): URLSearchParams {
  const params = new URL(request.url).searchParams
  const details = formTextDetails(params)
  if (details.length) throw new OAuthError('invalid_request', `The request failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}. Go back to the application and start again.`)
  return params
}

/** The client metadata of a registration: JSON within the shape limits (http/body-shape.ts), with text the database can hold. */
function clientMetadata(text: string): unknown {
  const shape = jsonShapeIssue(text)
  if (shape) throw new OAuthError('invalid_request', shapeMessage(shape))
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new OAuthError('invalid_client_metadata', 'The body is not valid JSON.')
  }
  const details = textDetails(body, 'body')
  if (details.length) throw new OAuthError('invalid_client_metadata', `The client metadata failed validation: ${details.map(d => `${d.field}: ${d.issue}`).join('; ')}.`)
  return body
}

/**
 * Runs an endpoint so that every failure is answered as OAuth error JSON, never reaching the API's
 * envelope: a database that cannot be reached as 503 `temporarily_unavailable` with Retry-After (as
 * the API's 503 `service_unavailable`), anything else unforeseen as 500 `server_error`, logged.
 */
async function guarded(fn: () => Response | Promise<Response>, log?: OAuthRouteDeps['log']): Promise<Response> {
  try {
    return await fn()
  } catch (e) {
    if (e instanceof OAuthError) return oauthError(e)
    const known = knownApiError(e)
    if (known?.code === 'service_unavailable') {
      log?.warn('the database cannot be reached', { error: (e as Error).message })
      return json({ error: 'temporarily_unavailable', error_description: known.message }, 503, known.options.headers)
    }
    log?.error('oauth endpoint failed', { error: e })
    return json({ error: 'server_error', error_description: 'The authorization server failed to process the request.' }, 500)
  }
}

export interface OAuthRouteDeps {
  service: OAuthService
  sessions: SessionService
  /** the public URL: the consent form must come from its origin */
  publicUrl: string
  log?: Pick<Logger, 'error' | 'warn'>
  /** per client address, the `write` class: registration, token and revocation requests */
  /** counts the registration, token and revocation requests of each client address */
  admission?: Pick<Admission, 'limitAddress'>
}

/**
 * The OAuth 2.1 authorization server: metadata (RFC 8414, RFC 9728), registration (RFC 7591), the
 * authorization and consent step, the token endpoint and revocation (RFC 7009). Every handler returns
 * its own Response, so the API's error envelope never applies here.
 */
export function oauthRoutes(deps: OAuthRouteDeps) {
  const { service, sessions } = deps
  const notAllowed = (allow: string) => () => json({ error: 'invalid_request', error_description: `Use ${allow}.` }, 405, { allow })
  const preflight = () => new Response(null, { status: 204, headers: CORS })
  async function limit(server: PeerServer, request: Request) {
    if (!deps.admission) return
    try {
      await deps.admission.limitAddress('oauth-ip', clientAddress(server, request), 'write')
    } catch (err) {
      if (err instanceof ApiError && err.code === 'rate_limited') throw new OAuthError('rate_limited', err.message, 429, err.options.headers)
      throw err
    }
  }
  const noParse = { parse: 'none' as const }

  function fieldsOf(params: URLSearchParams): Record<string, string> {
    const out: Record<string, string> = {}
    for (const k of AUTHORIZE_FIELDS) {
      const v = params.get(k)
      if (v !== null) out[k] = v
    }
    return out
  }

  function signIn(params: URLSearchParams): Response {
    const back = `/oauth/authorize?${new URLSearchParams(fieldsOf(params)).toString()}`
    return redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(back)}`, 303)
  }

  return (_guard: ReturnType<typeof authGuard>) => new Elysia({ name: 'oauth-routes' })
    .get('/.well-known/oauth-authorization-server', () => json(service.metadata(), 200, { 'cache-control': 'public, max-age=3600' }))
    .get('/.well-known/oauth-protected-resource', () => json(service.resourceMetadata(service.issuer), 200, { 'cache-control': 'public, max-age=3600' }))
    .get('/.well-known/oauth-protected-resource/mcp', () => json(service.resourceMetadata(`${service.issuer}/mcp`), 200, { 'cache-control': 'public, max-age=3600' }))
    .options('/.well-known/oauth-authorization-server', preflight)
    .options('/.well-known/oauth-protected-resource', preflight)
    .options('/.well-known/oauth-protected-resource/mcp', preflight)
    .get(OAUTH_STYLESHEET.path, ({ query }) => OAUTH_STYLESHEET.answer(query.v))

    .post('/oauth/register', ({ request, server }) => guarded(async () => {
      await limit(server, request)
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
      if (type !== 'application/json') throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json.')
      return json(await service.register(clientMetadata(await readBody(request))), 201)
    }, deps.log), noParse)
    .options('/oauth/register', preflight)
    .get('/oauth/register', notAllowed('POST'))

    .get('/oauth/authorize', async ({ request }) => {
      let params: URLSearchParams
      try {
        params = authorizeQuery(request)
      } catch (e) {
        return html(errorPage('Bad request', (e as OAuthError).description), 400)
      }
      const check = await service.checkAuthorization(params)
      if (check.kind === 'page') return html(errorPage('This authorization request cannot be completed', check.message), 400)
      if (check.kind === 'redirect') return redirect(check.location)
      const user = await sessions.userOf(request)
      if (!user) return signIn(params)
      const r = check.request
      return html(consentPage({
        clientName: r.client.name, clientId: r.client.id, redirectUri: r.redirectUri, email: user.email,
        scopes: service.describeScopes(r.scopes), fields: fieldsOf(params), csrf: user.csrf,
        workspaces: await service.workspacesOf(user.accountId),
      }))
    })
    .post('/oauth/authorize', async ({ request, server }) => {
      let params: URLSearchParams
      try {
        params = await readOAuthForm(request)
      } catch (e) {
        return html(errorPage('Bad request', e instanceof OAuthError ? e.description : 'The form could not be read.'), 400)
      }
      const check = await service.checkAuthorization(params)
      if (check.kind === 'page') return html(errorPage('This authorization request cannot be completed', check.message), 400)
      if (check.kind === 'redirect') return redirect(check.location, 303)
      const user = await sessions.userOf(request)
      if (!user) return signIn(params)
      if (!fromOwnOrigin(request, deps.publicUrl)) return html(errorPage('The form was sent from another site', `The consent form was not sent from ${deps.publicUrl}, so it was not accepted. Go back to the application and start again.`), 403)
      const csrf = params.get('csrf_token') ?? ''
      if (!safeEqual(csrf, user.csrf)) return html(errorPage('The form has expired', 'The form was not sent from this session (CSRF check failed). Go back to the application and start again.'), 403)
      const decision = params.get('decision')
      if (decision === 'allow') {
        // the workspace picked on the page must be one of the person's (absent: their personal one)
        const chosen = params.get('workspace') || user.accountId
        if (!(await service.workspacesOf(user.accountId)).some(w => w.id === chosen)) {
          return html(errorPage('Not one of your workspaces', `You are not a member of the workspace ${chosen}, so the application was not given access to it. Go back to the application, start again and pick one of your workspaces.`), 403)
        }
        return redirect(await service.approve(check.request, user.accountId, originOf(server, request), chosen), 303)
      }
      if (decision === 'deny') return redirect(service.deny(check.request), 303)
      return html(errorPage('Bad request', 'decision must be allow or deny.'), 400)
    }, noParse)

    .post('/oauth/token', ({ request, server }) => guarded(async () => {
      await limit(server, request)
      const params = await readOAuthForm(request)
      return json(await service.token(params, request.headers.get('authorization')))
    }, deps.log), noParse)
    .options('/oauth/token', preflight)
    .get('/oauth/token', notAllowed('POST'))

    .post('/oauth/revoke', ({ request, server }) => guarded(async () => {
      await limit(server, request)
      await service.revoke(await readOAuthForm(request), request.headers.get('authorization'), originOf(server, request))
      return new Response(null, { status: 200, headers: { 'cache-control': 'no-store', ...CORS } })
    }, deps.log), noParse)
    .options('/oauth/revoke', preflight)
    .get('/oauth/revoke', notAllowed('POST'))
}

/** API credentials: an OAuth access token becomes a Principal with source 'oauth' (expired or revoked: null, so 401). */
export function oauthAccessTokenVerifier(service: OAuthService): CredentialVerifier {
  return token => service.verifyAccessToken(token)
}
