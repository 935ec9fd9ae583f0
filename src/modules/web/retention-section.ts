import { escapeHtml as esc } from '../../http/html'
import type { RetentionPolicy } from '../retention/model'
import { MAX_RETENTION_DAYS } from '../retention/model'

/** The settings page's form path for the account's retention policy. */
export const RETENTION_FORM_PATH = '/settings/retention'

const describe = (p: { mode: string; days: number | null }) =>
  p.mode === 'forever' ? 'keep everything forever'
    : p.mode === 'media' ? `delete recordings ${p.days} days after the note was created (transcripts and summaries kept)`
      : `delete whole notes ${p.days} days after they were created`

/**
 * The settings page's "Retention" section: the policy in effect and the form that changes it. `of`
 * names whose policy it is when the browser works in a team (the personal workspace's: the team's is
 * set with its admin's key, PATCH /v1/settings/retention).
 */
export function retentionSection(p: RetentionPolicy, csrf: string, of = ''): string {
  const option = (value: string, label: string) => `<label><input type="radio" name="mode" value="${value}"${p.mode === value ? ' checked' : ''}> ${label}</label>`
  return `<section id="retention">
<h2>Retention${of}</h2>
<p>In effect: <strong id="retention-effective">${esc(describe(p.effective))}</strong>${p.mode === 'default' ? ' <span class="muted">(this server\'s default)</span>' : ''}. Finished and failed notes are swept on the server\'s schedule; notes still processing never are.</p>
<form method="post" action="${RETENTION_FORM_PATH}" id="retention-form">
<input type="hidden" name="csrf" value="${esc(csrf)}">
${option('default', `Server default (${esc(describe(p.instanceDefault))})`)}
${option('forever', 'Keep everything forever')}
${option('media', 'Delete recordings after the number of days below; keep transcripts, summaries and notes')}
${option('notes', 'Delete whole notes after the number of days below')}
<label>Days (1 to ${MAX_RETENTION_DAYS}, counted from each note's creation)<br><input type="number" name="days" min="1" max="${MAX_RETENTION_DAYS}" value="${p.days ?? ''}"></label>
<button type="submit">Save retention policy</button>
</form>
</section>`
}

/** The form's fields as the policy's change, or what the person must fix. */
export function retentionFormChange(form: URLSearchParams): { mode: 'default' | 'forever' | 'media' | 'notes'; days: number | null } | { error: string } {
  const mode = form.get('mode') ?? ''
  if (mode !== 'default' && mode !== 'forever' && mode !== 'media' && mode !== 'notes') return { error: 'Choose one of the retention options: server default, keep forever, delete recordings, or delete whole notes.' }
  if (mode === 'default' || mode === 'forever') return { mode, days: null }
  const raw = (form.get('days') ?? '').trim()
  const days = Number(raw)
  if (raw === '' || !Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) {
    return { error: `Give the number of days as a whole number from 1 to ${MAX_RETENTION_DAYS}: ${mode === 'media' ? 'recordings' : 'notes'} older than that are deleted.` }
  }
  return { mode, days }
}
