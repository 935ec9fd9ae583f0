/** The consent and error pages of /oauth/authorize: plain server-rendered HTML, no script. */

import { escapeHtml } from '../../http/html'

export { escapeHtml }

/**
 * No framing (clickjacking), no referrer to other sites (the query carries the request), nothing
 * cached, no script. `same-origin` rather than `no-referrer`: with no-referrer, browsers send
 * `Origin: null` on the consent form, which the origin check must refuse.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  // No form-action: browsers apply it to the redirect that follows the form, which goes to the client.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}ul{padding-left:1.2rem}li{margin:.4rem 0}code{background:#f3f3f3;padding:0 .2rem}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font-size:1rem;padding:.5rem 1.2rem;cursor:pointer}
.allow{background:#1a5fb4;color:#fff;border:0;border-radius:4px}.deny{background:#fff;border:1px solid #999;border-radius:4px}
.muted{color:#666;font-size:.9rem}`

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · notesvc</title><style>${STYLE}</style></head><body>${body}</body></html>`
}

export function consentPage(o: {
  clientName: string
  clientId: string
  redirectUri: string
  email: string
  scopes: { scope: string; description: string }[]
  /** the authorization request, echoed back with the decision and checked again */
  fields: Record<string, string>
  csrf: string
}): string {
  const hidden = Object.entries(o.fields).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('')
  const host = new URL(o.redirectUri).host
  return layout('Authorize application', `<h1>Allow <strong>${escapeHtml(o.clientName)}</strong> to use your notesvc account?</h1>
<p class="muted">Signed in as ${escapeHtml(o.email)}. The application's name is chosen by the application itself; it will be sent back to <code>${escapeHtml(host)}</code> (client <code>${escapeHtml(o.clientId)}</code>).</p>
<p>It asks to:</p>
<ul id="scopes">${o.scopes.map(s => `<li><code>${escapeHtml(s.scope)}</code> — ${escapeHtml(s.description)}</li>`).join('')}</ul>
<p class="muted">Its charges are taken from your credits. You can revoke its access at any time.</p>
<form method="post" action="/oauth/authorize">${hidden}<input type="hidden" name="csrf_token" value="${escapeHtml(o.csrf)}">
<div class="actions"><button class="allow" type="submit" name="decision" value="allow">Allow</button><button class="deny" type="submit" name="decision" value="deny">Deny</button></div></form>`)
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p id="error">${escapeHtml(message)}</p><p class="muted">You can close this page.</p>`)
}
