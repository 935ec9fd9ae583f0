// The speakers of a diarized note on its page: each turn of the transcript opens with its speaker's
// name (as text, in the speaker's colour), a click on a name renames the speaker in place (Enter
// saves, Escape cancels), and a filter shows one speaker's turns. The names come from the transcript
// formats (`verbose_json`: `speakers`, and each segment's `speakerId`), the rename is the API's
// PATCH /v1/notes/{id}/speakers/{speakerId}, after which the page reloads the note's data (the server
// renames the speaker in the summary and title too) without reloading the page.
import { api, explain } from './api.js'
import { $, el } from './dom.js'

/** Colour classes in the stylesheet (.spk-0 …), each readable on the page's light and dark surfaces. */
const COLOURS = 6

/** The speaker ids (A, B, …) in order, and each one's name and colour. */
function speakerIndex(speakers) {
  return new Map(speakers.map((s, i) => [s.id, { name: s.name, colour: `spk-${i % COLOURS}` }]))
}

/**
 * The transcript's list items for timed segments with speakers: the first segment of each turn (a
 * segment whose speaker differs from the one before) carries the speaker's name; `segmentButton(s, i)`
 * makes the segment's own row; only segments `from` to `to` (the page shows a long transcript in parts).
 */
export function speakerItems(segments, speakers, segmentButton, onRename, from = 0, to = segments.length) {
  const index = speakerIndex(speakers)
  return segments.slice(from, to).map((s, k) => {
    const i = from + k
    const who = s.speakerId ? index.get(s.speakerId) : undefined
    if (!who) return el('li', {}, segmentButton(s, i))
    const opensTurn = i === 0 || segments[i - 1].speakerId !== s.speakerId
    return el('li', { class: `turn ${who.colour}${opensTurn ? ' turn-start' : ''}`, 'data-speaker': s.speakerId },
      opensTurn ? el('button', {
        type: 'button', class: 'speaker-name', 'data-speaker': s.speakerId, text: who.name, title: `Rename ${who.name}`,
        onclick: e => onRename(e.currentTarget, s.speakerId, who.name),
      }) : null,
      segmentButton(s, i))
  })
}

/** The filter above the transcript: "All speakers" and each speaker; hidden when the note has none. */
export function renderSpeakerFilter(speakers, selected, onChange) {
  const tools = $('speaker-tools')
  const box = $('speaker-filter-box')
  if (!speakers.length) { tools.hidden = true; box.replaceChildren(); return '' }
  const value = speakers.some(s => s.id === selected) ? selected : ''
  const select = el('select', { id: 'speaker-filter', onchange: e => onChange(e.target.value) },
    el('option', { value: '', text: 'All speakers' }),
    ...speakers.map(s => el('option', { value: s.id, text: s.name })))
  select.value = value
  box.replaceChildren(el('label', { for: 'speaker-filter', text: 'Show' }), select)
  tools.hidden = false
  return value
}

/** Shows only the segments of speaker `id` ('' for everyone; a segment of no speaker shows only then), and says how many are shown. */
export function applySpeakerFilter(id, speakers) {
  const items = [...$('segments').children]
  let shown = 0
  for (const li of items) {
    li.hidden = id !== '' && li.dataset.speaker !== id
    if (!li.hidden) shown++
  }
  const who = speakers.find(s => s.id === id)
  $('speaker-shown').textContent = who ? `Showing the ${shown} segment${shown === 1 ? '' : 's'} of ${who.name}.` : ''
}

/**
 * Replaces a speaker's name button with a small form: the name in an input and Save. Enter saves,
 * Escape (or Cancel) puts the button back. `saved(name)` is called after the server has renamed them.
 */
export function openRename(button, noteId, speakerId, current, saved) {
  const inputId = `speaker-name-${speakerId}`
  const input = el('input', { id: inputId, value: current, maxLength: 100, autocomplete: 'off' })
  const cancel = () => { form.replaceWith(button); button.focus() }
  const form = el('form', { class: 'speaker-rename', 'data-speaker': speakerId },
    el('label', { for: inputId, class: 'sr-only', text: `New name for ${current}` }),
    input,
    el('button', { type: 'submit', text: 'Save' }),
    el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: cancel }))
  input.addEventListener('keydown', e => { if (e.key === 'Escape') { e.preventDefault(); cancel() } })
  form.addEventListener('submit', async e => {
    e.preventDefault()
    const name = input.value.trim()
    if (name === current) { cancel(); return }
    form.querySelectorAll('button, input').forEach(x => { x.disabled = true })
    try {
      // a blank name unnames the speaker: "Speaker A" again
      const r = await api('PATCH', `/v1/notes/${encodeURIComponent(noteId)}/speakers/${encodeURIComponent(speakerId)}`, { name: name || null })
      // past the account's limit of remembered voices the name is given but not remembered: say so
      await saved(r.displayName, `${current} is now ${r.displayName}.${r.notice ? ` ${r.notice}` : ''}`)
    } catch (err) {
      form.querySelectorAll('button, input').forEach(x => { x.disabled = false })
      $('action-status').textContent = explain(err)
      input.focus()
    }
  })
  button.replaceWith(form)
  input.focus()
  input.select()
}
