import { SCOPES } from '../../http/contract'
import type { KeyInfo } from '../accounts/service'
import type { Balance } from '../usage/service'
import { commandLine } from '../../command-name'
import { escapeHtml, stylesheet } from '../../http/html'
import css from './assets/pages.css' with { type: 'text' }
import { SWITCH_PATH, WORKSPACE_PAGE_PATH, type CurrentWorkspace } from './workspace-choice'

export const esc = escapeHtml

/** The pages' style, served as a stylesheet (`/assets/pages.css`): their CSP allows no inline style. */
export const PAGES_STYLESHEET = stylesheet('/assets/pages.css', css)

/** The signed-in user as the page header shows them. */
export interface HeaderUser {
  email: string
  csrf: string
}

/**
 * The header of every signed-in page (the library, a note, the workspace page, account settings): the
 * same navigation, the workspace switcher (when given), the credit balance always in view, the user and
 * the sign-out button.
 */
export function siteHeader(o: { user: HeaderUser; balance: number | null; current: 'library' | 'settings' | 'workspace'; workspace?: CurrentWorkspace }): string {
  const link = (href: string, text: string, on: boolean) => `<a href="${href}"${on ? ' aria-current="page"' : ''}>${text}</a>`
  return `<header class="top">
<a class="brand" href="/">notesvc</a>
<nav aria-label="Main">${link('/', 'Library', o.current === 'library')}${link(WORKSPACE_PAGE_PATH, 'Workspace', o.current === 'workspace')}${link('/settings', 'Account', o.current === 'settings')}</nav>
${o.workspace ? workspaceSwitcher(o.workspace, o.user.csrf, o.current === 'library' ? '/' : o.current === 'workspace' ? WORKSPACE_PAGE_PATH : '/settings') : ''}
<span class="balance-chip" title="Credits available (monthly grant and prepaid)"><span id="balance">${o.balance === null ? '—' : esc(o.balance)}</span> credits</span>
<form method="post" action="/signout" class="signout"><span class="who">${esc(o.user.email)}</span><input type="hidden" name="csrf" value="${esc(o.user.csrf)}"><button type="submit">Sign out</button></form>
</header>`
}

/**
 * The header's workspace menu: the current workspace, the person's others (a form: works without the
 * script), and "New team workspace" (the workspace page's form). The workspace's names are escaped.
 */
function workspaceSwitcher(w: CurrentWorkspace, csrf: string, next: string): string {
  const options = w.all.map(x => `<option value="${esc(x.id)}"${x.id === w.current.id ? ' selected' : ''}>${esc(x.name)}${x.kind === 'team' ? ` (${esc(x.role)})` : ''}</option>`).join('')
  return `<form method="post" action="${SWITCH_PATH}" class="workspace-switch" id="workspace-switch">
<input type="hidden" name="csrf" value="${esc(csrf)}"><input type="hidden" name="next" value="${esc(next)}">
<label for="workspace-select">Workspace</label>
<select id="workspace-select" name="workspace" data-current="${esc(w.current.id)}">${options}</select>
<button type="submit" id="workspace-go">Switch</button>
<a href="${WORKSPACE_PAGE_PATH}#new-team" id="new-team-link">New team workspace</a>
</form>`
}

interface PageOptions {
  title: string
  body: string
  /** the signed-in user: shows the sign-out button */
  user?: { email: string; csrf: string }
  /** the credit balance the header shows for a signed-in user */
  balance?: number
  /** a per-response nonce that the Content-Security-Policy allows for inline script */
  nonce: string
  script?: string
  /** the header's workspace switcher */
  workspace?: CurrentWorkspace
}

function layout(o: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(o.title)} · notesvc</title>
<link rel="stylesheet" href="${PAGES_STYLESHEET.href}">
</head>
<body>
${o.user ? siteHeader({ user: o.user, balance: o.balance ?? null, current: 'settings', workspace: o.workspace }) : '<header><b>notesvc</b></header>'}
<main>
${o.body}
</main>
${o.script ? `<script nonce="${esc(o.nonce)}">${o.script}</script>` : ''}
</body>
</html>`
}

/** How people may sign in: the password form (NOTESVC_PASSWORD_SIGNIN) and the provider's button (single sign-on). */
export interface SignInMethods {
  password: boolean
  /** "Sign in with <name>": its link carries `next` on */
  sso?: { name: string; startPath: string }
}

export function signInPage(o: { next: string; csrf: string; error?: string; email?: string; nonce: string; methods?: SignInMethods }): string {
  const methods = o.methods ?? { password: true }
  const sso = methods.sso
    ? `<p><a class="sso" id="sso-signin" href="${esc(`${methods.sso.startPath}?next=${encodeURIComponent(o.next)}`)}">Sign in with ${esc(methods.sso.name)}</a></p>${methods.password ? '<p class="muted">or with your notesvc password:</p>' : ''}`
    : ''
  const form = methods.password
    ? `<form method="post" action="/signin">
<input type="hidden" name="csrf" value="${esc(o.csrf)}">
<input type="hidden" name="next" value="${esc(o.next)}">
<label>Email<br><input type="email" name="email" autocomplete="username" required${methods.sso ? '' : ' autofocus'} value="${esc(o.email ?? '')}"></label>
<label>Password<br><input type="password" name="password" autocomplete="current-password" required></label>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">No password yet? The operator sets one with <code>${esc(commandLine('accounts password --email you@example.com'))}</code>.</p>`
    : ''
  return layout({
    title: 'Sign in',
    nonce: o.nonce,
    body: `<section class="narrow">
<h1>Sign in</h1>
${o.error ? `<div class="error" role="alert">${esc(o.error)}</div>` : ''}
${sso}${form}
</section>`,
  })
}

export function messagePage(o: { title: string; message: string; nonce: string; link?: { href: string; text: string } }): string {
  return layout({
    title: o.title,
    nonce: o.nonce,
    body: `<section class="narrow"><h1>${esc(o.title)}</h1><p>${esc(o.message)}</p>${o.link ? `<p><a href="${esc(o.link.href)}">${esc(o.link.text)}</a></p>` : ''}</section>`,
  })
}

function date(iso: string | null): string {
  if (!iso) return '<span class="muted">never</span>'
  return `<time datetime="${esc(iso)}">${esc(iso.slice(0, 16).replace('T', ' '))} UTC</time>`
}

export interface UsageRowView {
  operation: string
  credits: number
  source: string
  noteId: string | null
  createdAt: string
}

export function settingsPage(o: {
  user: { email: string; csrf: string }
  keys: KeyInfo[]
  balance: Balance
  recent: UsageRowView[]
  nonce: string
  newKey?: { key: string; info: KeyInfo }
  error?: string
  /** the audit log's section (./audit-section.ts), rendered */
  audit?: string
  /** the Retention section (./retention-section.ts), rendered */
  retention?: string
  /** the workspace the browser works in: the key form makes keys for it; the credits and usage below stay the personal workspace's */
  workspace?: CurrentWorkspace
  /** the header's figure: the credits of the workspace the person works in (default: the personal balance) */
  headerBalance?: number
}): string {
  const csrfField = `<input type="hidden" name="csrf" value="${esc(o.user.csrf)}">`
  const keyRows = o.keys.map(k => `<tr data-key-id="${esc(k.id)}">
<td><code>${esc(k.start)}…</code></td>
<td>${k.name ? esc(k.name) : '<span class="muted">—</span>'}</td>
<td>${k.sandbox ? '<span class="tag sandbox">sandbox</span>' : '<span class="tag">live</span>'}</td>
<td>${k.scopes.map(s => `<code>${esc(s)}</code>`).join('<br>')}</td>
<td>${date(k.createdAt)}</td>
<td>${date(k.lastUsedAt)}</td>
<td>${k.revokedAt ? `<span class="tag revoked">revoked</span><br>${date(k.revokedAt)}` : `<form method="post" action="/settings/keys/${encodeURIComponent(k.id)}/revoke" data-confirm="Revoke ${esc(k.start)}…? Programs using it stop working at once.">${csrfField}<button class="danger" type="submit">Revoke</button></form>`}</td>
</tr>`).join('\n')
  const usageRows = o.recent.map(u => `<tr>
<td><code>${esc(u.operation)}</code></td>
<td>${esc(u.credits)}</td>
<td>${esc(u.source)}</td>
<td>${u.noteId ? `<code>${esc(u.noteId)}</code>` : '<span class="muted">—</span>'}</td>
<td>${date(u.createdAt)}</td>
</tr>`).join('\n')
  const b = o.balance
  // in a team workspace, the page's credits and usage are still the personal workspace's (the team's are on the workspace page)
  const team = o.workspace?.current.kind === 'team'
  return layout({
    title: 'Account settings',
    user: o.user,
    balance: o.headerBalance ?? o.balance.totalRemaining,
    nonce: o.nonce,
    workspace: o.workspace,
    script: `document.querySelectorAll('form[data-confirm]').forEach(function(f){f.addEventListener('submit',function(e){if(!confirm(f.dataset.confirm))e.preventDefault()})});
var c=document.getElementById('copy-key');if(c)c.addEventListener('click',function(){navigator.clipboard.writeText(document.getElementById('new-key').textContent).then(function(){c.textContent='Copied'})});`,
    body: `<h1>Account settings</h1>
${o.error ? `<div class="error" role="alert">${esc(o.error)}</div>` : ''}
<section>
<h2>Credits${team ? ' of your personal workspace' : ''}</h2>
<div class="balance">
<div><span class="muted">Plan</span><strong>${esc(b.plan)}</strong></div>
<div><span class="muted">Monthly grant left</span><strong id="grant">${esc(b.grantRemaining)} / ${esc(b.grantTotal)}</strong></div>
<div><span class="muted">Prepaid</span><strong id="prepaid">${esc(b.purchasedRemaining)}</strong></div>
<div><span class="muted">Total available</span><strong id="total">${esc(b.totalRemaining)}</strong></div>
<div><span class="muted">Grant resets</span><strong class="date">${date(b.grantResetsAt)}</strong></div>
</div>
</section>
<section>
<h2>API keys</h2>
<p class="muted" id="keys-workspace">${o.workspace && o.workspace.current.kind === 'team'
    ? `Keys you made for <b>${esc(o.workspace.current.name)}</b>, the workspace you work in (the header's menu): they act as you, with your role there (${esc(o.workspace.current.role)}), and stop working if you leave it. Its admins see all its keys on <a href="${WORKSPACE_PAGE_PATH}">the workspace page</a>.`
    : 'Keys of your personal workspace. To make a key for a team, pick the team in the header\'s workspace menu first.'}</p>
${o.newKey ? `<div class="newkey" role="status"><b>New ${o.newKey.info.sandbox ? 'sandbox' : 'live'} key${o.newKey.info.name ? ` “${esc(o.newKey.info.name)}”` : ''} for ${o.workspace && o.workspace.current.kind === 'team' ? esc(o.workspace.current.name) : 'your personal workspace'}.</b> Copy it now: it is shown only this once and stored only as a hash.
<code id="new-key">${esc(o.newKey.key)}</code><button type="button" class="secondary" id="copy-key">Copy</button></div>` : ''}
${o.keys.length ? `<table id="keys"><thead><tr><th>Key</th><th>Name</th><th>Library</th><th>Scopes</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>
${keyRows}
</tbody></table>` : '<p class="muted">No keys yet.</p>'}
</section>
<section>
<h2>Create a key</h2>
<form method="post" action="/settings/keys" id="create-key">
${csrfField}
<label>Name<br><input type="text" name="name" maxlength="100" placeholder="e.g. laptop script"></label>
<label class="inline"><input type="radio" name="library" value="live" checked> Live</label>
<label class="inline"><input type="radio" name="library" value="sandbox"> Sandbox (the separate test library)</label>
<div class="scopes">
${SCOPES.map(s => `<label><input type="checkbox" name="scopes" value="${esc(s.scope)}" checked> <code>${esc(s.scope)}</code> <span class="muted">${esc(s.description)}</span></label>`).join('\n')}
</div>
<button type="submit">Create key</button>
</form>
</section>
${o.retention ?? ''}
<section>
<h2>Recent usage${team ? ' of your personal workspace' : ''}</h2>
${o.recent.length ? `<table id="usage"><thead><tr><th>Operation</th><th>Credits</th><th>Source</th><th>Note</th><th>Date</th></tr></thead><tbody>
${usageRows}
</tbody></table>` : '<p class="muted">No usage yet.</p>'}
</section>
${o.audit ?? ''}`,
  })
}
