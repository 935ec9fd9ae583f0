// A note's timed transcript on its page (docs/decisions.md "Correcting a transcript in the browser"):
// each segment a row of a play button (its start) and its text, whose words the engine heard with
// low confidence are marked (with words for screen readers). A click on the text (or Enter on it) opens
// it for editing in place and plays the recording from the word clicked; Enter saves (PATCH
// …/segments/{i} with If-Match of the version read), Escape cancels. The rows are built lean (no
// helper per word): a two-hour transcript has 20,000 words.
import { apiCall, ApiFailure, canWrite, explain, versionOf } from './api.js'
import { clock, el } from './dom.js'
import { noteState, notePath, say } from './note-state.js'

/**
 * Below this confidence a word is marked as doubtful: the server's threshold for doubt
 * (LOW_CONFIDENCE of src/engines/llm/builtin/doubt.ts), given to the page on its body element.
 */
const LOW_CONFIDENCE = Number(document.body.dataset.lowConfidence)
const STALE_AFTER_412 = 'Someone changed this transcript meanwhile; reloaded. Your text was not saved: make the change again if it is still needed.'

const hooks = { edited: () => {}, reload: async () => {}, seek: () => {} }
/** What the page does after a saved edit, to reload the transcript, and to play from a time. */
export function onTranscriptEvents(h) { Object.assign(hooks, h) }

/**
 * Each segment's words: verbose_json lists the transcript's words once, in order; a word belongs to
 * the last segment that starts at or before it (times rounded alike on the server).
 */
export function attachWords(segments, words) {
  let k = 0
  segments.forEach((s, i) => {
    const next = segments[i + 1]
    const mine = []
    while (k < words.length && (!next || words[k].start < next.start)) mine.push(words[k++])
    s.words = mine
  })
}

const plain = t => t.toLowerCase().replace(/[^\p{L}\p{N}']+/gu, '')

/** The text's whitespace tokens, each with its word: by position when as many, else by letters in order. */
function pairTokens(text, words) {
  const tokens = String(text).trim().split(/\s+/).filter(Boolean)
  if (!words || !words.length) return tokens.map(t => [t, null])
  if (tokens.length === words.length) return tokens.map((t, i) => [t, words[i]])
  let k = 0
  return tokens.map(t => {
    const p = plain(t)
    for (let j = k; j < Math.min(words.length, k + 4); j++) if (plain(words[j].word) === p) { k = j + 1; return [t, words[j]] }
    return [t, null]
  })
}

const doubtful = w => w && typeof w.confidence === 'number' && w.confidence < LOW_CONFIDENCE

/** A segment's text as an element: the words in spans (doubtful ones marked), focusable to edit. */
function textElement(s, i) {
  const box = document.createElement('div')
  box.className = 'text'
  box.tabIndex = 0
  box.setAttribute('role', 'button')
  box.setAttribute('aria-describedby', 'edit-help')
  box.dataset.index = String(i)
  const pairs = pairTokens(s.text, s.words)
  pairs.forEach(([token, w], k) => {
    if (k) box.append(' ')
    if (!w) { box.append(token); return }
    const span = document.createElement('span')
    span.className = doubtful(w) ? 'w doubt' : 'w'
    span.dataset.start = String(w.start)
    span.textContent = token
    if (doubtful(w)) {
      const sr = document.createElement('span')
      sr.className = 'sr-only'
      sr.textContent = ' (unsure)'
      span.append(sr)
      span.title = `Heard with low confidence (${Math.round(w.confidence * 100)} %)`
    }
    box.append(span)
  })
  return box
}

/** A segment's row: its start as a play button, and its text. */
export function segmentRow(s, i) {
  const row = document.createElement('div')
  row.className = 'seg'
  row.dataset.index = String(i)
  const play = document.createElement('button')
  play.type = 'button'
  play.className = 'play ts'
  play.dataset.start = String(s.start)
  play.textContent = clock(s.start)
  play.setAttribute('aria-label', `Play from ${clock(s.start)}`)
  row.append(play, textElement(s, i))
  return row
}

export const rowOf = i => document.querySelector(`#segments .seg[data-index="${i}"]`)

/** The clicks and keys of the transcript, once for the whole list. */
export function listenToTranscript(list) {
  list.addEventListener('click', e => {
    const play = e.target.closest('button.play')
    if (play) { hooks.seek(Number(play.closest('.seg').dataset.index), null); return }
    const text = e.target.closest('.seg > .text')
    if (!text) return
    const word = e.target.closest('.w')
    const i = Number(text.dataset.index)
    if (word) hooks.seek(i, Number(word.dataset.start))
    // a viewer's page offers no editor (the API would refuse the edit with 403)
    if (canWrite()) openEditor(i, word)
  })
  list.addEventListener('keydown', e => {
    const text = e.target.closest && e.target.closest('.seg > .text')
    if (text && e.target === text && canWrite() && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); openEditor(Number(text.dataset.index), null) }
  })
}

/** Opens segment `i` for editing in place, the caret at `word` (a word span clicked) or at the end. */
function openEditor(i, word) {
  const row = rowOf(i)
  const s = noteState.segments[i]
  const text = row && row.querySelector(':scope > .text')
  if (!text || !s) return
  const input = el('textarea', { class: 'seg-input', id: `seg-input-${i}`, rows: 2, 'aria-describedby': 'edit-help', spellcheck: true })
  input.value = s.text.trim()
  const editor = el('div', { class: 'seg-editor', 'data-index': String(i) },
    el('label', { for: input.id, class: 'sr-only', text: `Text of the segment at ${clock(s.start)}` }), input,
    el('div', { class: 'seg-buttons' },
      el('button', { type: 'button', class: 'save', text: 'Save', onclick: () => save(i, input, editor, performance.now()) }),
      el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: () => close(i, editor) })))
  input.addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); save(i, input, editor, performance.now()) }
    else if (e.key === 'Escape') { e.preventDefault(); close(i, editor) }
  })
  text.replaceWith(editor)
  input.focus()
  const caret = word ? caretAt(text, word) : input.value.length
  input.setSelectionRange(caret, caret)
}

/** Where `word` starts in the segment's text as the editor shows it. */
function caretAt(text, word) {
  let at = 0
  for (const node of text.childNodes) {
    if (node === word) return at
    at += node.nodeType === Node.TEXT_NODE ? node.textContent.length : (node.firstChild ? node.firstChild.textContent.length : 0)
  }
  return at
}

/** The editor of segment `i` closed: its text shown again (as saved), focused. */
function close(i, editor) {
  const text = textElement(noteState.segments[i], i)
  editor.replaceWith(text)
  text.focus()
  return text
}

async function save(i, input, editor, started) {
  if (editor.dataset.saving) return
  const value = input.value.replace(/\s+/g, ' ').trim()
  if (value === noteState.segments[i].text.trim()) { close(i, editor); return }
  if (!value) { say('A segment cannot be empty: write what was said, or press Escape to keep it.'); return }
  editor.dataset.saving = '1'
  input.readOnly = true
  editor.querySelectorAll('button').forEach(b => { b.disabled = true })
  try {
    const { body, etag } = await apiCall('PATCH', notePath(`/segments/${i}`), { text: value }, { 'if-match': `"${noteState.version}"` })
    noteState.version = versionOf(etag)
    const seg = body.segment
    Object.assign(noteState.segments[i], { text: seg.text, words: seg.words, timing: seg.timing })
    close(i, editor)
    performance.measure('segment-saved', { start: started })
    say(seg.timing === 'aligned' ? 'Saved; the words are timed to the recording.' : `Saved; the words are timed in proportion (${seg.timingNote || 'no engine could align them'}).`)
    hooks.edited()
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 412) {
      await hooks.reload()
      say(STALE_AFTER_412)
      const row = rowOf(i)
      if (row) row.querySelector('.text').focus()
      return
    }
    delete editor.dataset.saving
    input.readOnly = false
    editor.querySelectorAll('button').forEach(b => { b.disabled = false })
    say(explain(err))
    input.focus()
  }
}
