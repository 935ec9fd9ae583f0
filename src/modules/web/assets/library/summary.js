// Used by the note page and by the add dialog, which shows a summary it has just made.
import { el } from './dom.js'

/** The summary in its style: sections, bullets, decisions and action items as such; plain text otherwise. */
export function renderSummary(styleId, structured, summary) {
  const s = structured || {}
  const box = el('div', { class: 'rendered' })
  const list = (items, tag = 'ul') => el(tag, {}, items.map(x => el('li', { text: String(x) })))
  const paragraphs = text => String(text || '').split(/\n{2,}/).filter(t => t.trim()).map(t => el('p', { text: t.trim() }))
  const meeting = s['meeting-notes']
  const note = s.note
  const bullets = s.bulletpoints
  if (meeting && typeof meeting === 'object') {
    if (meeting.summary) box.append(...paragraphs(meeting.summary))
    if (Array.isArray(meeting.attendees) && meeting.attendees.length) box.append(el('h3', { text: 'Attendees' }), el('p', { text: meeting.attendees.join(', ') }))
    box.append(el('h3', { text: 'Decisions' }), Array.isArray(meeting.decisions) && meeting.decisions.length ? list(meeting.decisions) : el('p', { class: 'hint', text: 'No decisions recorded.' }))
    box.append(el('h3', { text: 'Action items' }))
    if (Array.isArray(meeting.actionItems) && meeting.actionItems.length) {
      box.append(el('ul', { class: 'actions' }, meeting.actionItems.map(a => el('li', {},
        el('span', { class: 'task', text: String(a.task || '') }),
        a.owner ? el('span', { class: 'owner', text: ` — ${a.owner}` }) : null,
        a.due ? el('span', { class: 'due', text: ` (due ${a.due})` }) : null))))
    } else box.append(el('p', { class: 'hint', text: 'No action items.' }))
    return box
  }
  if (note && typeof note === 'object') {
    if (note.summary) box.append(...paragraphs(note.summary))
    for (const sec of Array.isArray(note.sections) ? note.sections : []) {
      box.append(el('h3', { text: String(sec.heading || '') }), list(Array.isArray(sec.points) ? sec.points : []))
    }
    return box
  }
  if (bullets && Array.isArray(bullets.bullets)) {
    box.append(list(bullets.bullets))
    return box
  }
  box.append(...paragraphs(summary))
  if (!box.childNodes.length) box.append(el('p', { class: 'hint', text: 'No summary yet.' }))
  return box
}
