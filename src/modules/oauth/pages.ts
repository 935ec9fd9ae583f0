/** The consent and error pages of /oauth/authorize: plain server-rendered HTML, no script. */

import { escapeHtml, stylesheet } from '../../http/html'
import { pageHeaders } from '../../http/security-headers'
import css from './assets/pages.css' with { type: 'text' }
import type { ConsentWorkspace } from './model'


/**
 * No framing (clickjacking), no referrer to other sites (the query carries the request), nothing
 * cached, no script, styles only from the stylesheet. `same-origin` rather than `no-referrer`: with
 * no-referrer, browsers send `Origin: null` on the consent form, which the origin check must refuse.
 * No form-action: browsers apply it to the redirect that follows the form, which goes to the client.
 */
export const PAGE_HEADERS: Record<string, string> = pageHeaders("default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'")

/** The pages' style, served as a stylesheet (`/assets/oauth.css`): their CSP allows no inline style. */
export const OAUTH_STYLESHEET = stylesheet('/assets/oauth.css', css)

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · notesvc</title><link rel="stylesheet" href="${OAUTH_STYLESHEET.href}"></head><body>${body}</body></html>`
}

/**
 * The workspace picker: a `<select name="workspace">` when the person has more than one (the personal
 * one selected), nothing when they have only their own (the grant is then to it, as before workspaces).
 */
function workspacePicker(workspaces: ConsentWorkspace[]): string {
  if (workspaces.length < 2) return ''
  const options = workspaces.map((w, i) => `<option value="${escapeHtml(w.id)}"${i === 0 ? ' selected' : ''}>${escapeHtml(w.name)} (${escapeHtml(w.role)})</option>`).join('')
  return `<p><label for="workspace">It acts in the workspace</label> <select id="workspace" name="workspace">${options}</select></p>
<p class="muted">It can do there only what your role allows; its charges are taken from that workspace's credits.</p>`
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
  /** the person's workspaces (personal first); a picker when more than one */
  workspaces: ConsentWorkspace[]
}): string {
  const hidden = Object.entries(o.fields).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('')
  const host = new URL(o.redirectUri).host
  return layout('Authorize application', `<h1>Allow <strong>${escapeHtml(o.clientName)}</strong> to use your notesvc account?</h1>
<p class="muted">Signed in as ${escapeHtml(o.email)}. The application's name is chosen by the application itself; it will be sent back to <code>${escapeHtml(host)}</code> (client <code>${escapeHtml(o.clientId)}</code>).</p>
<p>It asks to:</p>
<ul id="scopes">${o.scopes.map(s => `<li><code>${escapeHtml(s.scope)}</code> — ${escapeHtml(s.description)}</li>`).join('')}</ul>
<form method="post" action="/oauth/authorize">${hidden}<input type="hidden" name="csrf_token" value="${escapeHtml(o.csrf)}">
${o.workspaces.length < 2 ? '<p class="muted">Its charges are taken from your credits. You can revoke its access at any time.</p>' : `${workspacePicker(o.workspaces)}<p class="muted">You can revoke its access at any time.</p>`}
<div class="actions"><button class="allow" type="submit" name="decision" value="allow">Allow</button><button class="deny" type="submit" name="decision" value="deny">Deny</button></div></form>`)
}

export function errorPage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1><p id="error">${escapeHtml(message)}</p><p class="muted">You can close this page.</p>`)
}
