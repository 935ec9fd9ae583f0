// Find and replace across a note's transcript: the preview lists each segment that would change
// (before and after, each chosen by default; POST …/replacements/preview writes nothing), then
// "Replace all" or "Replace chosen" applies them in one edit (POST …/replacements with If-Match of the
// version read; one revision, so one undo).
import { apiCall, ApiFailure, explain, versionOf } from './api.js'
import { $, clock, el } from './dom.js'
import { noteState, notePath, say } from './note-state.js'

let preview = null
let reloadTranscript = async () => {}

const request = () => ({ find: $('find-text').value, replace: $('replace-text').value, matchCase: $('match-case').checked, wholeWord: $('whole-word').checked })
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`

function renderPreview(p) {
  const list = $('replace-matches')
  const box = $('replace-preview')
  box.hidden = false
  if (!p.count) {
    $('replace-summary').textContent = `No match for “${p.find}”.`
    list.replaceChildren()
    $('replace-apply').hidden = true
    return
  }
  $('replace-summary').textContent = `${plural(p.count, 'match', 'matches')} in ${plural(p.matches.length, 'segment', 'segments')}. Untick the segments to leave as they are.`
  list.replaceChildren(...p.matches.map(m => {
    const id = `replace-pick-${m.segment}`
    const s = noteState.segments[m.segment]
    return el('li', { class: 'replace-match' },
      el('input', { type: 'checkbox', id, checked: true, 'data-segment': String(m.segment) }),
      el('label', { for: id },
        el('span', { class: 'hint', text: s && s.start !== null && s.start !== undefined ? `${clock(s.start)} ` : `Segment ${m.segment + 1} ` }),
        el('del', { text: m.before }), ' → ', el('ins', { text: m.after })))
  }))
  $('replace-apply').hidden = false
}

async function showPreview(e) {
  e.preventDefault()
  if (!$('find-text').value) return
  try {
    const body = request()
    preview = { ...(await apiCall('POST', notePath('/replacements/preview'), body)).body, request: body }
    renderPreview({ ...preview, find: body.find })
  } catch (err) { say(explain(err)) }
}

async function apply(onlyChosen) {
  if (!preview) return
  const chosen = [...$('replace-matches').querySelectorAll('input[type=checkbox]:checked')].map(c => Number(c.dataset.segment))
  if (onlyChosen && !chosen.length) { say('No segment is ticked: tick the ones to change, or press Replace all.'); return }
  const body = onlyChosen ? { ...preview.request, segments: chosen } : preview.request
  try {
    const { body: r, etag } = await apiCall('POST', notePath('/replacements'), body, { 'if-match': `"${noteState.version}"` })
    noteState.version = versionOf(etag)
    preview = null
    $('replace-preview').hidden = true
    await reloadTranscript()
    say(`Replaced ${plural(r.count, 'match', 'matches')} in ${plural(r.segments.length, 'segment', 'segments')}.`)
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 412) {
      await reloadTranscript()
      say('Someone changed this transcript meanwhile; reloaded. Preview the replacement again.')
      $('replace-preview').hidden = true
    } else say(explain(err))
  }
}

export function initFindReplace(reload) {
  reloadTranscript = reload
  $('find-form').addEventListener('submit', showPreview)
  $('replace-all').addEventListener('click', () => apply(false))
  $('replace-chosen').addEventListener('click', () => apply(true))
}
