// "Summarize again" on a note's page: the summary made again in a style picked (the interface's four),
// from the transcript as it is now (POST /v1/notes/{id}/summaries), charged as the API charges a
// summary; the note says when its summary is older than the transcript (`summaryStale`).
import { api, explain, library } from './api.js'
import { $, charged, credits } from './dom.js'
import { noteState, notePath, say } from './note-state.js'
import { noteStatus, pause, POLL_MS } from './status.js'

/** The stale marker and the picker's price, from the note as last read and the cost table. */
export function renderResummarize(note, costs) {
  $('summary-stale').hidden = !(note && note.summaryStale)
  if (note && note.styleId && !$('resummarize-style').dataset.touched) $('resummarize-style').value = note.styleId
  const price = library === 'sandbox' ? 0 : (costs && typeof costs.summarizeText === 'number' ? costs.summarizeText : null)
  $('resummarize-go').textContent = price === null ? 'Summarize again' : `Summarize again (${credits(price)})`
  $('resummarize').hidden = !note || note.status !== 'Done'
}

export function initResummarize(reloadNote) {
  $('resummarize-style').addEventListener('change', e => { e.target.dataset.touched = '1' })
  $('resummarize').addEventListener('submit', async e => {
    e.preventDefault()
    const button = $('resummarize-go')
    button.disabled = true
    $('resummarize-status').textContent = 'Summarizing…'
    try {
      const r = await api('POST', notePath('/summaries'), { styleId: $('resummarize-style').value })
      while ((await noteStatus(noteState.note.id)).status === 'Summarizing') await pause(POLL_MS / 3)
      await reloadNote()
      $('resummarize-status').textContent = `Summarized again. ${charged(r)}`
      say('The summary was made again.')
    } catch (err) {
      $('resummarize-status').textContent = explain(err)
    } finally { button.disabled = false }
  })
}
