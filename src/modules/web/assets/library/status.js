// A note's processing status in words and as a badge, and asking for it: the interface has no
// events, so the pages poll GET /v1/notes/{id}/status every POLL_MS.
import { api } from './api.js'
import { el } from './dom.js'

export const POLL_MS = 1500
const STAGES = {
  awaiting_upload: 'Waiting for upload',
  recording: 'Recording live',
  queued: 'Queued',
  converting: 'Converting',
  transcribing: 'Transcribing',
  summarizing: 'Summarizing',
}

/**
 * The stage a processing note is at, in words: the API's `processingStage` (never "Summarizing" before
 * anything was transcribed), with the share transcribed while `transcribing` when `progress` is known.
 */
function stageWords(processingStage, progress) {
  const stage = STAGES[processingStage] || 'Processing'
  return typeof progress === 'number' && processingStage === 'transcribing' ? `${stage} ${Math.round(progress * 100)} %` : stage
}

export function statusText(s) {
  if (s.status === 'Done') return 'Done'
  if (s.status === 'Error') return `Failed${s.errorMessage ? `: ${s.errorMessage}` : ''}`
  return stageWords(s.processingStage, s.progress)
}
/** A listed or opened note's state in its badge: the stage while it is processing. */
export const stageText = n => (n.status === 'Summarizing' ? stageWords(n.processingStage, n.progress) : n.status)

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
