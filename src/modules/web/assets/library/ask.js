// The library page's "Ask your library" box: a question across every note of the library (POST
// /v1/questions, askLibrary), answered with its citations, each a link to the note page at the moment
// cited (`/notes/{id}?t=SECONDS`, which note.js opens there). Text from the API goes in as text only.
import { api, explain, refreshBalance } from './api.js'
import { $, charged, clock, el } from './dom.js'

/** One citation: the note's title and the moment as a link, who said it, and the passage. */
function citation(c) {
  const moment = c.start === null ? '' : ` at ${clock(c.start)}`
  return el('li', { class: 'citation' },
    el('a', { href: c.url, text: `${c.title || 'Untitled'}${moment}` }),
    c.speaker ? el('span', { class: 'hint', text: ` · ${c.speaker}` }) : null,
    el('p', { class: 'passage', text: c.text }))
}

export function initAskLibrary() {
  const form = $('ask-library-form')
  if (!form) return
  form.addEventListener('submit', async e => {
    e.preventDefault()
    const question = $('library-question').value.trim()
    if (!question) return
    const entry = el('div', { class: 'qa' }, el('p', { class: 'q', text: question }), el('p', { class: 'a hint', text: 'Looking through your notes…' }))
    $('library-answers').prepend(entry)
    try {
      const r = await api('POST', '/v1/questions', { question })
      const cited = r.citations.length ? el('ol', { class: 'citations', 'aria-label': 'Where the answer comes from' }, r.citations.map(citation)) : null
      entry.lastChild.replaceWith(el('p', { class: 'a', text: r.answer }), cited, el('p', { class: 'cost hint', text: charged(r) }))
      $('library-question').value = ''
      refreshBalance()
    } catch (err) { entry.lastChild.replaceWith(el('p', { class: 'a error', text: explain(err) })) }
  })
}
