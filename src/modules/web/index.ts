import { readForm } from '../../http/form-body'
import { Elysia } from 'elysia'
import type { AccountsService, KeyInfo } from '../accounts/service'
import type { UsageService } from '../usage/service'
import { isScope, type Scope } from '../../http/contract'
import { clientAddress } from '../../http/client-address'
import { ApiError } from '../../http/errors'
import { fromOwnOrigin } from '../../http/origin'
import { messagePage, PAGES_STYLESHEET, settingsPage, signInPage, type SignInMethods } from './pages'
import { cookieValue, SIGN_IN_PATH, type SessionUser } from './sessions'
import type { WebService } from './service'
import { safeEqual } from '../../crypto/digest'
import { pageResponse, randomToken } from '../../http/html'
import type { SessionCredential } from '../../http/auth'
import type { UploadsService } from '../uploads/service'
import { libraryRoutes, type LibraryRouteDeps } from './library'
import { currentWorkspace, SWITCH_PATH, workspaceCookie, workspacesOf, type WorkspaceChoice, type WorkspaceDirectory } from './workspace-choice'
import type { WorkspacesService } from '../workspaces/service'
import type { Principal } from '../../http/principal'
import { ALL_SCOPES } from '../../http/contract'
import type { AuditService } from '../audit/service'
import { originOf, userBy } from '../audit/by'
import { jsonLinesResponse } from '../audit/json-lines'
import { AUDIT_DOWNLOAD_PATH, auditSection } from './audit-section'
import type { RetentionService } from '../retention/service'
import { RETENTION_FORM_PATH, retentionFormChange, retentionSection } from './retention-section'

const SETTINGS_PATH = '/settings'
/** The pre-session CSRF cookie of the sign-in form (double submit: cookie and hidden field must match). */
const SIGN_IN_CSRF_COOKIE = 'notesvc_signin_csrf'
const RECENT_USAGE = 25
const RECENT_AUDIT_EVENTS = 25
const BASE = 'http://notesvc.invalid'

/**
 * The `next` parameter as the path to send the browser to, if it is one on this site (`/settings`,
 * `/oauth/authorize?…`); null for anything that could leave the site: absolute URLs, `//host`,
 * backslashes (browsers read `/\host` as `//host`), control characters, other schemes.
 *
 * The value is resolved first, then checked, and the checked value is the one returned: dot segments
 * (`/.//host`, `/x/..//host`, `/%2e//host`) resolve to `//host`, so a check of the raw string alone
 * would pass what the browser then reads as another site. The resolved path must also read back as
 * itself, so no second resolution (the browser's) can turn it into something else.
 */
export function safeNext(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048) return null
  if (raw[0] !== '/' || /[\\\x00-\x1f\x7f]/.test(raw)) return null
  const resolved = sameSitePath(raw)
  if (resolved === null || resolved.startsWith('//') || sameSitePath(resolved) !== resolved) return null
  return resolved
}

/** `path` resolved against this site (dot segments applied, percent-encoded as a browser sends it), or null when it leaves it. */
function sameSitePath(path: string): string | null {
  let url: URL
  try {
    url = new URL(path, BASE)
  } catch {
    return null
  }
  return url.origin === BASE ? url.pathname + url.search + url.hash : null
}


/** The pages' forms are a few fields: a body of more than 1 MB is refused before it is read. */
const MAX_FORM_BODY_BYTES = 1024 * 1024

const formOf = (request: Request) => readForm(request, { limit: MAX_FORM_BODY_BYTES, multipart: true })

export interface WebRouteDeps {
  web: WebService
  accounts: AccountsService
  usage: UsageService
  /** the library pages play recordings and read their lengths */
  uploads: UploadsService
  /** the signed-in browser as an API credential (./api-session.ts) */
  session: SessionCredential
  /** origins besides this one that the browser PUTs uploads to (an S3 endpoint) */
  uploadOrigins: string[]
  /** the server streams live transcription: the library shows its record button */
  liveStreams?: boolean
  /** share links are on (NOTESVC_SHARING) */
  sharing?: boolean
  /** the public URL: https means cookies are marked Secure */
  publicUrl: string
  /** the audit log: key changes and sign-outs recorded, the latest events shown in the settings page */
  audit: AuditService
  /** the password form (off: NOTESVC_PASSWORD_SIGNIN=off) and the single sign-on button; default: the form alone */
  signInMethods?: SignInMethods
  /** the settings page's Retention section */
  retention?: RetentionService
  /** the person's workspaces and roles: the header's switcher, the workspace and invitation pages */
  workspaces: LibraryRouteDeps['workspaces'] & Pick<WorkspaceDirectory, 'keysOf'>
  /** the settings page's key form in a team workspace: createWorkspaceKey, revokeWorkspaceKey */
  workspaceKeys: Pick<WorkspacesService, 'createKey' | 'revokeKey'>
}

/** An HTML page (with the pages' headers: pageResponse). */
function html(body: string, status = 200, extra: Record<string, string> = {}, cookies: string[] = [], nonce = ''): Response {
  return pageResponse(body, { status, headers: extra, cookies, nonce })
}

/** 303 to `location`, never cached. */
function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store' })
  for (const c of cookies) headers.append('set-cookie', c)
  return new Response(null, { status: 303, headers })
}

/** A page rendered with a fresh CSP nonce. */
function page(render: (nonce: string) => string, status = 200, extra: Record<string, string> = {}, cookies: string[] = []): Response {
  const nonce = randomToken()
  return html(render(nonce), status, extra, cookies, nonce)
}

/** A form whose CSRF token is missing or stale. */
const forbidden = () => page(nonce => messagePage({
  nonce, title: 'Form expired',
  message: 'This form could not be accepted (its security token is missing or does not match your session). Reload the page and try again.',
  link: { href: SETTINGS_PATH, text: 'Back to account settings' },
}), 403)

/** The sign-in and account settings pages. */
/** A form sent from another site: refused, with where to open the service instead. */
const crossOriginPage = (publicUrl: string) => page(nonce => messagePage({
  nonce, title: 'Form refused',
  message: `This form was sent from another site, so it was not accepted. Open ${publicUrl} directly and try again (if that is not where you opened it, set NOTESVC_PUBLIC_URL to the address you use).`,
  link: { href: SETTINGS_PATH, text: 'Back to account settings' },
}), 403)

/** The sign-in form's own CSRF cookie (before there is a session). */
function signInCsrfCookieOf(secure: boolean, value: string, maxAge: number): string {
  return `${SIGN_IN_CSRF_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${SIGN_IN_PATH}; Max-Age=${maxAge}${secure ? '; Secure' : ''}`
}

/** Sign-ins from this address were refused too often: when to try again. */
function tooManyAttemptsPage(next: string, retryAfterSeconds: number): Response {
  const minutes = Math.ceil(retryAfterSeconds / 60)
  return page(nonce => messagePage({
    nonce, title: 'Too many attempts',
    message: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    link: { href: `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`, text: 'Back to sign-in' },
  }), 429, { 'retry-after': String(retryAfterSeconds) })
}

const passwordsOffPage = (methods: SignInMethods) => page(nonce => messagePage({
  nonce, title: 'Password sign-in is off',
  message: `This notesvc does not accept passwords (NOTESVC_PASSWORD_SIGNIN=off).${methods.sso ? ` Sign in with ${methods.sso.name} instead.` : ''}`,
  link: { href: SIGN_IN_PATH, text: 'Back to sign-in' },
}), 403)

/**
 * The settings page as the signed-in person sees it in the workspace they work in: their usage, keys,
 * audit lines and retention policy (the personal workspace's), the keys they made for a team.
 */
function settingsPages(deps: WebRouteDeps) {
  const { accounts, usage } = deps
  async function settings(user: SessionUser, o: { status?: number; newKey?: { key: string; info: KeyInfo }; error?: string; request: Request }): Promise<Response> {
    const u = await usage.usage(user.accountId, RECENT_USAGE)
    const workspace = await currentWorkspace(deps.workspaces, o.request, user.accountId)
    const keys = await keysShown(user, workspace.current)
    // the header's chip shows the credits of the workspace the person works in, as on the library's pages
    const headerBalance = workspace.current.kind === 'team' ? (await usage.usage(workspace.current.id, 1)).balance.totalRemaining : u.balance.totalRemaining
    const events = (await deps.audit.list(user.accountId, { limit: RECENT_AUDIT_EVENTS })).items
    const retention = await deps.retention?.policy(user.accountId)
    // in a team, the audit log and retention shown are still the personal workspace's: said in their headings
    const of = workspace.current.kind === 'team' ? ' of your personal workspace' : ''
    return page(nonce => settingsPage({
      audit: auditSection(events, of),
      nonce, user, keys, balance: u.balance,
      recent: u.recent.map(r => ({ operation: r.operation, credits: r.credits, source: r.source, noteId: r.noteId, createdAt: r.createdAt })),
      newKey: o.newKey, error: o.error,
      retention: retention ? retentionSection(retention, user.csrf, of) : undefined,
      workspace, headerBalance,
    }), o.status ?? 200)
  }

  /** The key list of the settings page: the personal workspace's keys, or those the person made for the team they work in. */
  async function keysShown(user: SessionUser, w: WorkspaceChoice): Promise<KeyInfo[]> {
    if (w.kind !== 'team') return accounts.listKeysOf(user.accountId)
    const mine = new Set((await deps.workspaces.keysOf(w.id)).filter(k => k.made_by === user.accountId).map(k => k.id))
    return (await accounts.listKeysOf(w.id)).filter(k => mine.has(k.id))
  }

  /** The signed-in person as a principal of the team workspace they work in (the form carried the session's CSRF token). */
  const memberPrincipal = (user: SessionUser, w: WorkspaceChoice): Principal => ({
    accountId: w.id, actorId: user.accountId, role: w.role, sandbox: false, scopes: new Set(ALL_SCOPES), credentialId: 'ses_settings', source: 'oauth',
  })

  return { settings, memberPrincipal }
}

export function webRoutes(deps: WebRouteDeps) {
  const { web, accounts, usage } = deps
  const sessions = web.sessions
  const secure = deps.publicUrl.startsWith('https:')
  const methods: SignInMethods = deps.signInMethods ?? { password: true }
  const { settings, memberPrincipal } = settingsPages(deps)

  const crossOrigin = () => crossOriginPage(deps.publicUrl)

  const toSignIn = (next: string) => redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`)

  const signInCsrfCookie = (value: string, maxAge = 3600) => signInCsrfCookieOf(secure, value, maxAge)

  /** The signed-in user of a form post whose CSRF field matches the session's, else the response to send. */
  async function formUser(request: Request, next: string): Promise<{ user: SessionUser; form: URLSearchParams } | Response> {
    if (!fromOwnOrigin(request, deps.publicUrl)) return crossOrigin()
    const user = await sessions.userOf(request)
    if (!user) return toSignIn(next)
    const form = await formOf(request)
    if (!safeEqual(form.get('csrf') ?? '', user.csrf)) return forbidden()
    return { user, form }
  }

  const noParse = { parse: 'none' as const }

  return (_guard: unknown) => new Elysia({ name: 'notesvc-web' })
    .use(libraryRoutes({ sessions, session: deps.session, uploads: deps.uploads, usage, uploadOrigins: deps.uploadOrigins, audit: deps.audit, liveStreams: deps.liveStreams ?? false, sharing: deps.sharing, workspaces: deps.workspaces }))
    .get(PAGES_STYLESHEET.path, ({ query }) => PAGES_STYLESHEET.answer(query.v))
    .get(SIGN_IN_PATH, async ({ request, query }) => {
      const next = safeNext(query.next) ?? SETTINGS_PATH
      if (await sessions.userOf(request)) return redirect(next)
      const existing = cookieValue(request.headers.get('cookie'), SIGN_IN_CSRF_COOKIE)
      const csrf = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken()
      return page(nonce => signInPage({ nonce, next, csrf, methods }), 200, {}, [signInCsrfCookie(csrf)])
    })

    .post(SIGN_IN_PATH, async ({ request, server }) => {
      if (!methods.password) {
        return passwordsOffPage(methods)
      }
      if (!fromOwnOrigin(request, deps.publicUrl)) return crossOrigin()
      const form = await formOf(request)
      const cookieCsrf = cookieValue(request.headers.get('cookie'), SIGN_IN_CSRF_COOKIE)
      const next = safeNext(form.get('next')) ?? SETTINGS_PATH
      if (!cookieCsrf || !safeEqual(form.get('csrf') ?? '', cookieCsrf)) {
        // Most likely cookies are off or the form is old: show a fresh form.
        const csrf = randomToken()
        return page(nonce => signInPage({ nonce, next, csrf, methods, error: 'The sign-in form expired. Please try again.' }), 403, {}, [signInCsrfCookie(csrf)])
      }
      const email = (form.get('email') ?? '').trim()
      const password = form.get('password') ?? ''
      const result = await web.signIn(email, password, clientAddress(server, request), request.headers.get('user-agent'))
      if (result.ok) return redirect(next, [result.setCookie, signInCsrfCookie('', 0)])
      if (result.reason === 'limited') return tooManyAttemptsPage(next, result.retryAfterSeconds)
      return page(nonce => signInPage({ nonce, next, csrf: cookieCsrf, email, methods, error: 'The email or password is not right.' }), 401)
    }, noParse)

    .post('/signout', async ({ request, server }) => {
      const r = await formUser(request, SETTINGS_PATH)
      if (r instanceof Response) return r
      return redirect(SIGN_IN_PATH, [await web.signOut(request, r.user.accountId, originOf(server, request))])
    }, noParse)

    // The header's workspace menu: the cookie of the chosen workspace, when the person is a member of it.
    .post(SWITCH_PATH, async ({ request }) => {
      const r = await formUser(request, '/')
      if (r instanceof Response) return r
      const wanted = r.form.get('workspace') ?? ''
      const next = safeNext(r.form.get('next')) ?? '/'
      if (!(await workspacesOf(deps.workspaces, r.user.accountId)).some(w => w.id === wanted)) {
        return page(nonce => messagePage({
          nonce, title: 'Not your workspace',
          message: 'You are not a member of that workspace (any more). Pick one of your workspaces in the header\'s menu, or ask an admin of the workspace to invite you.',
          link: { href: '/', text: 'Back to your library' },
        }), 403)
      }
      return redirect(next, [workspaceCookie(wanted, secure)])
    }, noParse)

    .get(SETTINGS_PATH, async ({ request }) => {
      const user = await sessions.userOf(request)
      if (!user) return toSignIn(SETTINGS_PATH)
      return settings(user, { request })
    })

    // The whole audit log as JSON lines, for the settings page's link: the session cookie (a read; the
    // cookie is SameSite=Lax, so another site cannot have it sent), as GET /v1/audit-events/export.
    .get(AUDIT_DOWNLOAD_PATH, async ({ request, server }) => {
      const user = await sessions.userOf(request)
      if (!user) return toSignIn(SETTINGS_PATH)
      return jsonLinesResponse(await deps.audit.exportFor(user.accountId, {}, userBy(user.accountId, server, request)), `audit-${user.accountId}.jsonl`)
    })

    .post(`${SETTINGS_PATH}/keys`, async ({ request, server }) => {
      const r = await formUser(request, SETTINGS_PATH)
      if (r instanceof Response) return r
      const { user, form } = r
      const library = form.get('library') ?? 'live'
      if (library !== 'live' && library !== 'sandbox') return settings(user, { request, status: 400, error: 'Choose live or sandbox.' })
      const chosen = form.getAll('scopes')
      const scopes = [...new Set(chosen.filter(isScope))] as Scope[]
      if (scopes.length === 0 || scopes.length !== new Set(chosen).size) {
        return settings(user, { request, status: 400, error: 'Choose at least one scope from the list.' })
      }
      const name = (form.get('name') ?? '').trim().slice(0, 100) || undefined
      const w = (await currentWorkspace(deps.workspaces, request, user.accountId)).current
      if (w.kind === 'team') {
        // a key of the team the person works in (createWorkspaceKey): it acts as them, with their role there
        const made = await deps.workspaceKeys.createKey(memberPrincipal(user, w), w.id, { name, sandbox: library === 'sandbox', scopes }, userBy(user.accountId, server, request))
        return settings(user, { request, newKey: { key: made.key, info: { ...made, scopes: made.scopes as Scope[], lastUsedAt: null, revokedAt: null } } })
      }
      const created = await accounts.createKey({ email: user.email, sandbox: library === 'sandbox', scopes, name }, userBy(user.accountId, server, request))
      return settings(user, { request, newKey: { key: created.key, info: created.info } })
    }, noParse)

    .post(RETENTION_FORM_PATH, async ({ request, server }) => {
      const r = await formUser(request, SETTINGS_PATH)
      if (r instanceof Response || !deps.retention) return r instanceof Response ? r : redirect(SETTINGS_PATH)
      const change = retentionFormChange(r.form)
      if ('error' in change) return settings(r.user, { request, status: 400, error: change.error })
      try {
        await deps.retention.update(r.user.accountId, change, { actor: { type: 'user', id: r.user.accountId }, origin: { ip: clientAddress(server, request), userAgent: request.headers.get('user-agent') } })
      } catch (err) {
        if (err instanceof ApiError && err.code === 'invalid_request') return settings(r.user, { request, status: 400, error: err.message })
        throw err
      }
      return redirect(`${SETTINGS_PATH}#retention`)
    }, noParse)

    .post(`${SETTINGS_PATH}/keys/:id/revoke`, async ({ request, params, server }) => {
      const r = await formUser(request, SETTINGS_PATH)
      if (r instanceof Response) return r
      const w = (await currentWorkspace(deps.workspaces, request, r.user.accountId)).current
      let revoked: boolean
      if (w.kind === 'team') {
        revoked = await deps.workspaceKeys.revokeKey(memberPrincipal(r.user, w), w.id, params.id, userBy(r.user.accountId, server, request)).then(() => true, err => {
          if (err instanceof ApiError && err.code === 'not_found') return false
          throw err
        })
      } else {
        revoked = Boolean(await accounts.revokeKeyOf(r.user.accountId, params.id, userBy(r.user.accountId, server, request)))
      }
      if (!revoked) return settings(r.user, { request, status: 404, error: 'There is no such key in this account.' })
      return redirect(SETTINGS_PATH)
    }, noParse)
}
