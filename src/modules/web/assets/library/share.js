// A note's share links (docs/decisions.md "Share links"): make one (what it shows, expiry, passphrase),
// copy its address (shown once: only its hash is kept), see how often each was opened, revoke it.
import { api, explain } from './api.js'
import { $, el, when } from './dom.js'

const DAY = 86_400_000

/** whether the link opens, as nodes: `revoked <time>`, `expired <time>`, `open until <time>`, `open` */
function linkState(s) {
  if (s.revokedAt) return ['revoked ', when(s.revokedAt)]
  if (s.expiresAt && Date.parse(s.expiresAt) <= Date.now()) return ['expired ', when(s.expiresAt)]
  return s.expiresAt ? ['open until ', when(s.expiresAt)] : ['open']
}

function shown(s) {
  const parts = ['transcript']
  if (s.showSummary) parts.push('summary')
  if (s.showSpeakers) parts.push("speakers' names")
  if (s.showRecording) parts.push('recording')
  if (s.formats.length) parts.push(`downloads (${s.formats.join(', ')})`)
  return parts.join(', ') + (s.hasPassphrase ? '; passphrase' : '')
}

async function loadShares(id) {
  const list = $('share-list')
  try {
    const { data } = await api('GET', `/v1/notes/${encodeURIComponent(id)}/shares`)
    if (!data.length) { list.replaceChildren(el('li', { class: 'hint', text: 'No links yet.' })); return }
    list.replaceChildren(...data.map(s => el('li', { 'data-share': s.id },
      el('span', {}, 'Made ', when(s.createdAt), ' · ', ...linkState(s), ` · opened ${s.openCount} time${s.openCount === 1 ? '' : 's'}`, ...(s.lastOpenedAt ? [', last ', when(s.lastOpenedAt)] : [])),
      el('span', { class: 'hint', text: ` Shows ${shown(s)}.` }),
      s.revokedAt ? null : el('button', { type: 'button', class: 'danger', text: 'Revoke', onclick: () => revoke(id, s.id) }))))
  } catch (err) { list.replaceChildren(el('li', { class: 'error', text: explain(err) })) }
}

async function revoke(id, shareId) {
  try {
    await api('DELETE', `/v1/notes/${encodeURIComponent(id)}/shares/${encodeURIComponent(shareId)}`)
    $('share-status').textContent = 'Revoked: the link no longer opens.'
  } catch (err) { $('share-status').textContent = explain(err) }
  loadShares(id)
}

function showCreated(url) {
  const input = el('input', { id: 'share-url', readOnly: true, value: url, 'aria-label': 'The new link' })
  const copy = el('button', { type: 'button', text: 'Copy', onclick: async () => {
    input.select()
    try { await navigator.clipboard.writeText(url); $('share-status').textContent = 'Copied.' } catch { $('share-status').textContent = 'Select the link and copy it.' }
  } })
  $('share-created').replaceChildren(el('p', { class: 'hint', text: 'Send this link. It is shown only now: keep it, or make a new one later.' }), el('span', { class: 'searchrow' }, input, copy))
  $('share-created').hidden = false
}

export function initShare(id) {
  const details = $('share')
  if (!details) return // the instance turned sharing off (NOTESVC_SHARING=off)
  details.addEventListener('toggle', () => { if (details.open) loadShares(id) })
  $('share-form').addEventListener('submit', async e => {
    e.preventDefault()
    const f = e.target
    const body = {
      showSummary: f.showSummary.checked, showSpeakers: f.showSpeakers.checked, showRecording: f.showRecording.checked,
      formats: [...f.querySelectorAll('input[name=formats]:checked')].map(x => x.value),
    }
    const days = Number(f.expires.value)
    if (days) body.expiresAt = new Date(Date.now() + days * DAY).toISOString()
    if (f.passphrase.value) body.passphrase = f.passphrase.value
    try {
      const created = await api('POST', `/v1/notes/${encodeURIComponent(id)}/shares`, body)
      showCreated(created.url)
      f.passphrase.value = ''
      $('share-status').textContent = 'Link made.'
    } catch (err) { $('share-status').textContent = explain(err) }
    loadShares(id)
  })
}
