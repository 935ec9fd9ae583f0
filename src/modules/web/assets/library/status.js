// A note's processing status in words and as a badge, and asking for it: the interface has no
// events, so the pages poll GET /v1/notes/{id}/status every POLL_MS.
import { api } from './api.js'
import { el } from './dom.js'

export const POLL_MS = 1500
const STAGES = {
  awaiting_upload: 'Waiting for the file',
  queued: 'Queued',
  converting: 'Converting',
  transcribing: 'Transcribing',
  summarizing: 'Summarizing',
}

export function statusText(s) {
  if (s.status === 'Done') return 'Done'
  if (s.status === 'Error') return `Failed${s.errorMessage ? `: ${s.errorMessage}` : ''}`
  const stage = STAGES[s.processingStage] || 'Processing'
  return typeof s.progress === 'number' && s.processingStage === 'transcribing' ? `${stage} ${Math.round(s.progress * 100)}%` : stage
}
/** A listed or opened note's state in its badge: the stage while it is processing. */
export const stageText = n => (n.status === 'Summarizing' ? (STAGES[n.processingStage] || 'Processing') : n.status)

export function badge(status, text) {
  return el('span', { class: `badge ${String(status).toLowerCase()}`, text: text || status })
}

/** Shows a status from GET …/status on a badge already in the page. */
export function showStatus(badgeElement, s) {
  badgeElement.className = `badge ${s.status.toLowerCase()}`
  badgeElement.textContent = statusText(s)
}

export const noteStatus = id => api('GET', `/v1/notes/${encodeURIComponent(id)}/status`)
export const pause = ms => new Promise(r => setTimeout(r, ms))
