// Tags in the browser (docs/decisions.md "Tags"): chips on the library's rows and on a note's page;
// on the library page a chip filters the list by its tag (several chosen: notes carrying all of them);
// on a note's page tags are added and removed, and the tags suggested from the summary's topics are
// offered with an accept, never applied unasked. Every name goes into the page as text.
import { api, explain } from './api.js'
import { $, el } from './dom.js'

const COLOR = /^#[0-9a-f]{6}$/i

/** A tag's chip: a button when `onclick` is given (the library's filter), with a remove button when `onremove` is. */
function tagChip(tag, { onclick, onremove, pressed } = {}) {
  const dot = el('span', { class: 'dot', 'aria-hidden': 'true' })
  if (COLOR.test(tag.color || '')) dot.style.backgroundColor = tag.color
  const chip = onclick
    ? el('button', { type: 'button', class: 'tag-chip', 'data-tag': tag.name, 'aria-pressed': pressed ? 'true' : 'false', title: `Show only notes tagged ${tag.name}`, onclick }, dot, tag.name)
    : el('span', { class: 'tag-chip', 'data-tag': tag.name }, dot, tag.name)
  if (!onremove) return chip
  return el('span', { class: 'tag-wrap' }, chip, el('button', { type: 'button', class: 'tag-remove', 'aria-label': `Remove the tag ${tag.name}`, text: '×', onclick: onremove }))
}

/** A row's tags on the library page; choosing one adds it to the list's filter (`onPick(name)`). */
export function rowTags(tags, chosen, onPick) {
  if (!Array.isArray(tags) || !tags.length) return null
  return el('p', { class: 'tags', 'aria-label': 'Tags' }, ...tags.map(t => tagChip(t, { onclick: () => onPick(t.name), pressed: chosen.includes(t.name.toLowerCase()) })))
}

/** The list's tag filter above the notes: one chip per chosen tag, each with a remove (`onRemove(name)`). */
export function renderTagFilter(names, onRemove) {
  let bar = $('tag-filter')
  if (!bar) {
    bar = el('p', { id: 'tag-filter', class: 'tags tag-filter', role: 'group', 'aria-label': 'Tag filter' })
    $('list-status').before(bar)
  }
  bar.hidden = names.length === 0
  bar.replaceChildren(names.length ? el('span', { class: 'hint', text: names.length === 1 ? 'Tagged ' : 'Tagged all of ' }) : '',
    ...names.map(name => tagChip({ name }, { onremove: () => onRemove(name) })))
}

/** A note's tags (made once, the last row of the note's actions box): its tags, adding one, the suggestions. */
export function initNoteTags(noteId) {
  const path = `/v1/notes/${encodeURIComponent(noteId)}/tags`
  const list = el('p', { id: 'note-tags', class: 'tags', 'aria-live': 'polite' })
  const input = el('input', { id: 'tag-input', maxLength: 50, autocomplete: 'off', placeholder: 'budget, customer…' })
  const status = el('p', { id: 'tag-status', class: 'hint', role: 'status', 'aria-live': 'polite' })
  const offered = el('p', { id: 'tag-suggestions', class: 'tags suggested', hidden: true })
  const form = el('form', { id: 'tag-form' }, el('label', { htmlFor: 'tag-input', text: 'Add a tag' }), el('span', { class: 'searchrow' }, input, el('button', { type: 'submit', text: 'Add' })))
  const section = el('section', { id: 'tags-section', class: 'note-tags', 'aria-labelledby': 'tags-title' }, el('h2', { id: 'tags-title', class: 'sr-only', text: 'Tags' }), list, offered, form, status)
  document.querySelector('.note-actions').append(section)

  const show = r => {
    list.replaceChildren(...(r.data.length ? r.data.map(t => tagChip(t, { onremove: () => change('DELETE', `${path}/${encodeURIComponent(t.id)}`, undefined, `Removed ${t.name}.`) })) : [el('span', { class: 'hint', text: 'No tags yet.' })]))
    offered.hidden = r.suggestedTags.length === 0
    offered.replaceChildren(el('span', { class: 'hint', text: 'Suggested from the summary: ' }),
      ...r.suggestedTags.map(name => el('button', { type: 'button', class: 'tag-suggestion', 'data-tag': name, 'aria-label': `Add the suggested tag ${name}`, text: `+ ${name}`, onclick: () => change('POST', path, { tags: [name] }, `Added ${name}.`) })))
  }
  async function change(method, url, body, done) {
    try {
      show(await api(method, url, body))
      status.textContent = done
    } catch (err) { status.textContent = explain(err) }
  }
  form.addEventListener('submit', async e => {
    e.preventDefault()
    const name = input.value.trim()
    if (!name) return
    await change('POST', path, { tags: [name] }, `Added ${name}.`)
    if (!status.textContent.startsWith('Added')) return
    input.value = ''
  })
  api('GET', path).then(show, err => { status.textContent = explain(err) })
}
