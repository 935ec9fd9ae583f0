import { Elysia } from 'elysia'
import { clientAddress } from '../../http/client-address'
import { pageResponse, randomToken } from '../../http/html'
import { messagePage } from '../web/pages'
import { cookieValue, SIGN_IN_PATH, type SessionService } from '../web/sessions'
import { safeNext } from '../web'
import { SSO_CALLBACK_PATH, SSO_START_PATH, type SsoFlow, type SsoService } from './service'

/** The cookie that carries state, nonce, PKCE verifier and `next` from the start to the callback. */
export const SSO_FLOW_COOKIE = 'notesvc_sso_flow'
const FLOW_MAX_AGE_SECONDS = 600

function readFlow(header: string | null): SsoFlow | null {
  const raw = cookieValue(header, SSO_FLOW_COOKIE)
  if (!raw) return null
  try {
    const f = JSON.parse(Buffer.from(raw, 'base64url').toString()) as Partial<SsoFlow>
    if (typeof f.state !== 'string' || typeof f.nonce !== 'string' || typeof f.verifier !== 'string' || typeof f.next !== 'string') return null
    return { state: f.state, nonce: f.nonce, verifier: f.verifier, next: safeNext(f.next) ?? '/' }
  } catch {
    return null
  }
}

/**
 * Single sign-on in the browser: GET /signin/oidc?next=… sends the browser to the provider; the
 * provider sends it back to GET /signin/oidc/callback, which signs it in (a session, as a password
 * sign-in makes) or shows a page saying why not and what to ask for.
 */
export function ssoRoutes(deps: { sso: SsoService; sessions: Pick<SessionService, 'create'>; publicUrl: string }) {
  const { sso } = deps
  const secure = deps.publicUrl.startsWith('https:')
  const flowCookie = (value: string, maxAge: number) =>
    `${SSO_FLOW_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${SSO_START_PATH}; Max-Age=${maxAge}${secure ? '; Secure' : ''}`

  function refusal(r: { status: number; title: string; message: string }, next: string, cookies: string[] = []): Response {
    const nonce = randomToken()
    const body = messagePage({ nonce, title: r.title, message: r.message, link: { href: `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`, text: 'Back to sign-in' } })
    return pageResponse(body, { status: r.status, cookies })
  }

  function redirect(location: string, cookies: string[]): Response {
    const headers = new Headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
    for (const c of cookies) headers.append('set-cookie', c)
    return new Response(null, { status: 303, headers })
  }

  return new Elysia({ name: 'notesvc-sso' })
    .get(SSO_START_PATH, async ({ query }) => {
      const next = safeNext(query.next) ?? '/'
      const r = await sso.begin(next)
      if (!('url' in r)) return refusal(r as { status: number; title: string; message: string }, next)
      return redirect(r.url, [flowCookie(Buffer.from(JSON.stringify(r.flow)).toString('base64url'), FLOW_MAX_AGE_SECONDS)])
    })
    .get(SSO_CALLBACK_PATH, async ({ request, server }) => {
      const flow = readFlow(request.headers.get('cookie'))
      const origin = { ip: clientAddress(server, request), userAgent: request.headers.get('user-agent') }
      const r = await sso.finish(new URL(request.url).search, flow, origin)
      // the flow is used once, whatever the outcome
      const clear = flowCookie('', 0)
      if (!r.ok) return refusal(r, flow?.next ?? '/', [clear])
      const { setCookie } = await deps.sessions.create(r.accountId)
      return redirect(r.next, [setCookie, clear])
    })
}
