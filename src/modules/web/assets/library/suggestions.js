// Voices suggested, never applied: a speaker whose voice sounds like one the library remembers carries
// a `suggestion` ("Clara?"); the person confirms it (the name given, as a rename) or dismisses it (not
// offered again for this note), through POST …/speakers/{id}/suggestion with If-Match.
import { apiCall, ApiFailure, explain, versionOf } from './api.js'
import { $, el } from './dom.js'
import { noteState, notePath, say } from './note-state.js'

let reloadTranscript = async () => {}

async function answer(speaker, accept) {
  const s = speaker.suggestion
  try {
    const { etag } = await apiCall('POST', notePath(`/speakers/${encodeURIComponent(speaker.id)}/suggestion`), { accept }, { 'if-match': `"${noteState.version}"` })
    noteState.version = versionOf(etag)
    await reloadTranscript()
    say(accept ? `${speaker.name} is now ${s.name}.` : `${s.name} dismissed for ${speaker.name}; it is not suggested again for this note.`)
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 412) {
      await reloadTranscript()
      say('Someone changed this transcript meanwhile; reloaded. Answer the suggestion again if it is still there.')
    } else say(explain(err))
  }
}

/** One line per speaker with a suggestion: "Speaker A: Clara? (95 % alike) Confirm Dismiss"; hidden when none. */
export function renderSuggestions(speakers) {
  const box = $('suggestions')
  const offered = speakers.filter(s => s.suggestion)
  box.hidden = !offered.length
  box.replaceChildren(...offered.map(s => el('p', { class: 'suggestion', 'data-speaker': s.id },
    el('span', {}, `${s.name}: `, el('strong', { text: `${s.suggestion.name}?` }), el('span', { class: 'hint', text: ` (a voice this library remembers, ${Math.round(s.suggestion.similarity * 100)} % alike)` })),
    el('button', { type: 'button', class: 'confirm', text: 'Confirm', 'aria-label': `Confirm that ${s.name} is ${s.suggestion.name}`, onclick: () => answer(s, true) }),
    el('button', { type: 'button', class: 'secondary dismiss', text: 'Dismiss', 'aria-label': `Dismiss ${s.suggestion.name} for ${s.name}`, onclick: () => answer(s, false) }))))
}

export function initSuggestions(reload) { reloadTranscript = reload }
