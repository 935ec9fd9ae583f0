import { expect } from 'bun:test'
import { createTestApp } from './app'
import type { Env } from '../../src/config'
import type { Clock } from '../../src/clock'
import { createWebService } from '../../src/modules/web/service'
import { SESSION_COOKIE } from '../../src/modules/web/sessions'
import type { Page } from 'playwright-core'

export interface PageResult {
  status: number
  headers: Headers
  text: string
  location: string | null
  cookies: string[]
}

/**
 * A tiny cookie-keeping browser of the pages at `origin`: each request is handed to `send` (a test
 * app's `app.handle`, or `fetch` for a server over HTTP), redirects are not followed.
 */
export function cookieBrowser(origin: string, send: (request: Request) => Promise<Response>) {
  const jar = new Map<string, string>()
  async function request(method: string, path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<PageResult> {
    const h: Record<string, string> = { ...headers }
    if (jar.size) h.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    let body: string | undefined
    if (form) {
      const p = new URLSearchParams()
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x)
      body = p.toString()
      h['content-type'] = 'application/x-www-form-urlencoded'
    }
    const res = await send(new Request(`${origin}${path}`, { method, headers: h, body, redirect: 'manual' }))
    const cookies = res.headers.getSetCookie()
    for (const c of cookies) {
      const [pair, ...attrs] = c.split(';')
      const [k, ...v] = pair!.trim().split('=')
      if (attrs.some(a => /^\s*max-age=0\s*$/i.test(a))) jar.delete(k!)
      else jar.set(k!, v.join('='))
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location'), cookies }
  }
  return {
    jar,
    get: (path: string, headers?: Record<string, string>) => request('GET', path, undefined, headers),
    post: (path: string, form: Record<string, string | string[]>, headers?: Record<string, string>) => request('POST', path, form, headers),
    /** GET /signin and post the form with its CSRF field. */
    async signIn(email: string, password: string, next?: string): Promise<PageResult> {
      const page = await this.get(`/signin${next !== undefined ? `?next=${encodeURIComponent(next)}` : ''}`)
      return this.post('/signin', { csrf: field(page.text, 'csrf')!, next: field(page.text, 'next') ?? '', email, password })
    },
  }
}

/**
 * Signs in through the sign-in form of the pages at `origin` (sent by `send`: app.handle or fetch),
 * checks that it is sent on (303) to `next`, and gives the session's cookie as a Cookie header
 * (`notesvc_session=…`).
 */
export async function sessionCookie(origin: string, send: (request: Request) => Promise<Response>, email: string, password: string, next = '/settings'): Promise<string> {
  const b = cookieBrowser(origin, send)
  const r = await b.signIn(email, password, next)
  expect([r.status, r.location]).toEqual([303, next])
  return `${SESSION_COOKIE}=${b.jar.get(SESSION_COOKIE)}`
}

/** A test app with the web pages, and its browser over app.handle. */
export function createWebTestApp(opts: { env?: Env; clock?: Clock } = {}) {
  const t = createTestApp({ env: opts.env, clock: opts.clock })
  const web: ReturnType<typeof createWebService> = t.services.web
  return { ...t, web: () => web, browser: () => cookieBrowser('http://localhost', request => t.app.handle(request)) }
}

export type WebTestApp = ReturnType<typeof createWebTestApp>

/** A web test app in which the account `email` has the password `password`. */
export async function webAppWithPassword(email: string, password: string, opts: Parameters<typeof createWebTestApp>[0] = {}): Promise<WebTestApp> {
  const t = createWebTestApp(opts)
  await t.web().setPassword(email, password)
  return t
}

/**
 * A fresh browser of `t`, signed in as `email` through the sign-in form and sent on (303) to `next`
 * (/settings when not given); that page, and its CSRF token (the settings forms' hidden field, or the
 * library's meta tag).
 */
export async function signedIn(t: WebTestApp, email: string, password: string, next?: string) {
  const b = t.browser()
  const to = next ?? '/settings'
  const r = await b.signIn(email, password, next)
  expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: to })
  const page = await b.get(to)
  const csrf = field(page.text, 'csrf') ?? /<meta name="csrf-token" content="([^"]+)">/.exec(page.text)?.[1]
  return { b, page, csrf: csrf! }
}

/** The value of a hidden input in a page. */
export function field(html: string, name: string): string | null {
  const m = html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`))
  return m ? m[1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>') : null
}

/**
 * Runs a browser scenario in named steps: when one fails, the error says which step it was and
 * what the server printed meanwhile (`said()`), so a failure far up a CI log is still explained.
 */
export async function inSteps(said: () => string, scenario: (step: (name: string) => void) => Promise<void>): Promise<void> {
  let current = 'start'
  const started = performance.now()
  let stepStarted = started
  try {
    await scenario(name => { current = name; stepStarted = performance.now() })
  } catch (err) {
    const at = `${((stepStarted - started) / 1000).toFixed(1)} s in, for ${((performance.now() - stepStarted) / 1000).toFixed(1)} s`
    throw new Error(`step "${current}" failed (${at}): ${(err as Error).message}\nthe server printed:\n${said() || '(nothing)'}`, { cause: err })
  }
}

/**
 * Submits a server-rendered form as a person at a keyboard does: Enter in one of its text fields (the
 * form's default button), so no pointer position can miss on a loaded machine; then waits for the page
 * the server answers with. Returns that answer's status, or fails at once, saying so, when no POST to
 * `path` left the browser (rather than a later wait for the new page running out).
 */
export async function submitWithEnter(page: Page, field: string, path: string): Promise<number> {
  const [answer] = await Promise.all([
    page.waitForResponse(r => r.request().method() === 'POST' && new URL(r.url()).pathname === path, { timeout: 15_000 })
      .catch(() => { throw new Error(`pressing Enter in ${field} sent no POST to ${path} within 15 s`) }),
    page.press(field, 'Enter'),
  ])
  await page.waitForURL(u => u.pathname === path)
  return answer.status()
}
