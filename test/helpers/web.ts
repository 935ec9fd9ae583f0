import { createTestApp } from './app'
import type { Env } from '../../src/config'
import type { Clock } from '../../src/clock'
import { createWebService } from '../../src/modules/web/service'

export interface PageResult {
  status: number
  headers: Headers
  text: string
  location: string | null
  cookies: string[]
}

/** A test app with the web pages, and a tiny cookie-keeping browser over app.handle. */
export function createWebTestApp(opts: { env?: Env; clock?: Clock } = {}) {
  const t = createTestApp({ env: opts.env, clock: opts.clock })
  const web: ReturnType<typeof createWebService> = t.services.web

  function browser() {
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
      const res = await t.app.handle(new Request(`http://localhost${path}`, { method, headers: h, body, redirect: 'manual' }))
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

  return { ...t, web: () => web, browser }
}

/** The value of a hidden input in a page. */
export function field(html: string, name: string): string | null {
  const m = html.match(new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`))
  return m ? m[1]!.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>') : null
}
