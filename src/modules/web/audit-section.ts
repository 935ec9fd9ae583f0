import type { AuditEvent } from '../audit/model'
import { escapeHtml as esc } from '../../http/html'
import { WORKSPACE_PAGE_PATH } from './workspace-choice'

/** The settings page's download of the whole log (the session's cookie; the page's own route). */
export const AUDIT_DOWNLOAD_PATH = '/settings/audit-events.jsonl'

/** What an action reads as on the page. */
const ACTION_TEXT: Record<string, string> = {
  'signin.succeeded': 'Signed in',
  'signin.failed': 'Failed sign-in',
  signout: 'Signed out',
  'key.created': 'API key created',
  'key.revoked': 'API key revoked',
  'oauth.granted': 'Application authorized',
  'oauth.revoked': 'Application access revoked',
  'note.media_read': 'Recording played',
  'note.transcript_exported': 'Transcript read or exported',
  'note.deleted': 'Note deleted',
  'note.transcript_edited': 'Transcript edited',
  'note.media_deleted': 'Recording deleted',
  'folder.deleted': 'Folder deleted',
  'retention.changed': 'Retention changed',
  'plan.changed': 'Plan changed',
  'account.created': 'Account created',
  'audit.exported': 'Audit log exported',
}

const ACTOR_TEXT: Record<string, string> = { user: 'you, in the browser', key: 'API key', oauth: 'application', sso: 'single sign-on', policy: 'retention policy', operator: 'operator (command line)' }

const utc = (at: string) => `${at.slice(0, 19).replace('T', ' ')} UTC`

/** When: the time, and for a read counted more than once (READ_ACTIONS) the last of them. */
function when(e: AuditEvent): string {
  const first = `<time datetime="${esc(e.at)}">${esc(utc(e.at))}</time>`
  return e.count > 1 ? `${first}<br><span class="muted">last <time datetime="${esc(e.lastAt)}">${esc(utc(e.lastAt))}</time></span>` : first
}

function by(e: AuditEvent): string {
  const what = ACTOR_TEXT[e.actor.type] ?? e.actor.type
  return e.actor.type === 'user' || !e.actor.id ? esc(what) : `${esc(what)} <code>${esc(e.actor.id)}</code>`
}

/**
 * The settings page's "Activity" section: the latest events of the audit log (what, on what, when,
 * from where, by what) and a link that downloads every event as JSON lines. `of` names whose log it
 * is when the browser works in a team (the personal workspace's; the team's is on the workspace page).
 */
export function auditSection(events: AuditEvent[], of = ''): string {
  const rows = events.map(e => `<tr data-action="${esc(e.action)}" data-count="${e.count}">
<td>${esc(ACTION_TEXT[e.action] ?? e.action)}${e.count > 1 ? `, ${e.count} times` : ''}${e.target ? `<br><code class="muted">${esc(e.target.id)}</code>` : ''}</td>
<td>${when(e)}</td>
<td>${e.ip ? `<code>${esc(e.ip)}</code>` : '<span class="muted">—</span>'}${e.userAgent ? `<br><span class="muted">${esc(e.userAgent.slice(0, 80))}</span>` : ''}</td>
<td>${by(e)}</td>
</tr>`).join('\n')
  return `<section id="activity">
<h2>Activity${of}</h2>${of ? `
<p class="muted">The team's own activity is on <a href="${WORKSPACE_PAGE_PATH}">the workspace page</a>.</p>` : ''}
<p class="muted">Sign-ins, keys, authorized applications, recordings played, transcripts exported and deletions in this account: the latest ${events.length}. The same read by the same key or browser within ten minutes is one line with how many times. <a href="${AUDIT_DOWNLOAD_PATH}" download>Download all (JSON lines)</a></p>
${events.length ? `<table id="audit-events"><thead><tr><th>What</th><th>When</th><th>From where</th><th>By</th></tr></thead><tbody>
${rows}
</tbody></table>` : '<p class="muted">Nothing recorded yet.</p>'}
</section>`
}
