// A note's processing status in words and as a badge; the interface has no events, so the pages poll
// GET /v1/notes/{id}/status every POLL_MS.
import { el } from './dom.js'

export const POLL_MS = 1500
export const STAGES = {
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
export function badge(status, text) {
  return el('span', { class: `badge ${String(status).toLowerCase()}`, text: text || status })
}
