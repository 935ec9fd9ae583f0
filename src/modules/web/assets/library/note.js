// A note's page (`/notes/{id}`): the note with its summary, transcript (timed where it can be),
// recording, exports, questions and cost; renaming, moving, pinning and deleting it; and, while it is
// processing, its stage, then the whole note once it is done. A diarized note's speakers: speakers.js;
// the transcript's rows and editing: transcript.js; its history, undo and redo: history.js; summarizing
// again: resummarize.js; find and replace: findreplace.js; voice suggestions: suggestions.js; downloads:
// downloads.js.
import { api, apiCall, ApiFailure, explain, library, setLibrary, versionOf, workspaceId } from './api.js'
import { $, charged, credits, el, operationText, typeText, when } from './dom.js'
import { renderExports } from './downloads.js'
import { initFindReplace } from './findreplace.js'
import { folderName, folders, loadFolders } from './folders.js'
import { initHistory, loadHistory } from './history.js'
import { noteState, notePath } from './note-state.js'
import { initResummarize, renderResummarize } from './resummarize.js'
import { initShare } from './share.js'
import { badge, noteStatus, pause, POLL_MS, showStatus, stageText } from './status.js'
import { renderSummary } from './summary.js'
import { applySpeakerFilter, openRename, renderSpeakerFilter, speakerItems } from './speakers.js'
import { initSuggestions, renderSuggestions } from './suggestions.js'
import { initNoteTags } from './tags.js'
import { attachWords, listenToTranscript, onTranscriptEvents, rowOf, segmentRow } from './transcript.js'

/** the cost table of GET /v1/usage, once read */
let costs = null

/** The note's timed segments and its speakers (`{ id, name }`; none when it was not diarized). */
async function segmentsOf(note) {
  const t = note.structuredContent && note.structuredContent.transcript
  const styled = t && Array.isArray(t.segments) && t.segments.length ? t.segments : []
  // The timestamped segments of the transcript formats, where the server has them: they carry the speakers.
  let v = null
  try {
    const r = await apiCall('GET', `/v1/notes/${encodeURIComponent(note.id)}/transcript?format=verbose_json`)
    v = r.body
    noteState.version = versionOf(r.etag)
  } catch { /* plain transcript below */ }
  // text notes and notes transcribed before times were kept have none (`timed: false`): no invented 00:00
  const timed = v && v.timed && Array.isArray(v.segments) && v.segments.length ? v.segments : []
  if (timed.length) attachWords(timed, Array.isArray(v.words) ? v.words : [])
  const speakers = timed.length && Array.isArray(v.speakers) ? v.speakers : []
  if (styled.length && !speakers.length) return { segments: styled, speakers: [] }
  return { segments: timed, speakers }
}

/** Rows shown at once, then in parts of PART between frames: a long transcript never freezes the page. */
const FIRST_ROWS = 150
const PART = 400
let rendering = 0

async function renderTranscript(note, segments) {
  const ol = $('segments')
  const mine = ++rendering
  if (!segments.length) {
    $('transcript-tools').hidden = true
    ol.replaceChildren(...String(note.originalTranscription || '').split(/\n+/).filter(Boolean).map(t => el('li', { class: 'segment plain' }, el('span', { class: 'text', text: t }))))
    if (!ol.childNodes.length) ol.replaceChildren(el('li', { class: 'hint', text: note.status === 'Done' ? 'This note has no transcript.' : 'The transcript appears here when processing is done.' }))
    return
  }
  const speakers = noteState.speakers
  const rename = (button, id, name) => openRename(button, note.id, id, name, (_, said) => reloadAfterRename(note.id, id, said))
  const rows = (from, to) => (speakers.length
    ? speakerItems(segments, speakers, segmentRow, rename, from, to)
    : segments.slice(from, to).map((s, k) => el('li', {}, segmentRow(s, from + k))))
  noteState.current = -1
  ol.classList.toggle('with-speakers', speakers.length > 0)
  ol.replaceChildren(...rows(0, FIRST_ROWS))
  $('transcript-tools').hidden = false
  performance.mark('transcript-first-rows')
  for (let at = FIRST_ROWS; at < segments.length; at += PART) {
    await new Promise(resolve => setTimeout(resolve, 0))
    if (mine !== rendering) return
    ol.append(...rows(at, at + PART))
  }
  noteState.speakerFilter = renderSpeakerFilter(speakers, noteState.speakerFilter, filterSpeaker)
  applySpeakerFilter(noteState.speakerFilter, speakers)
}

function filterSpeaker(id) {
  noteState.speakerFilter = id
  applySpeakerFilter(id, noteState.speakers)
}

/**
 * After a rename: the note and its transcript again (the server renamed the speaker in the summary and
 * title too), without reloading the page; focus back on the speaker's name.
 */
async function reloadAfterRename(id, speakerId, said) {
  try {
    const note = await api('GET', `/v1/notes/${encodeURIComponent(id)}`)
    renderNote(note)
    await showTranscript(note)
    $('action-status').textContent = said
  } catch (err) {
    $('action-status').textContent = `${said} The page could not show it: ${explain(err)} Reload the page.`
    return
  }
  const name = $('segments').querySelector(`button.speaker-name[data-speaker="${CSS.escape(speakerId)}"]`)
  if (name) name.focus()
}

/** Plays segment `i` from `at` (a word's start) or from its start. */
function seek(i, at) {
  const s = noteState.segments[i]
  const player = noteState.player
  if (!s || !player) return
  player.currentTime = at ?? s.start
  highlight(i)
  player.play().catch(() => { /* autoplay may be refused; the position is set */ })
}

function highlight(i) {
  if (i === noteState.current) return
  const before = noteState.current >= 0 && rowOf(noteState.current)
  if (before) { before.classList.remove('current'); before.removeAttribute('aria-current') }
  noteState.current = i
  const row = i >= 0 && rowOf(i)
  if (row) {
    row.classList.add('current')
    row.setAttribute('aria-current', 'true')
    const r = row.getBoundingClientRect()
    if (!row.contains(document.activeElement) && (r.top < 0 || r.bottom > window.innerHeight)) row.scrollIntoView({ block: 'nearest' })
  }
}

/**
 * `?t=SECONDS` (a citation of askLibrary links there): on the first load, the player set to that moment
 * and the segment said then marked and scrolled to the middle of the view. Not played: a browser may
 * refuse to play before the user acts.
 */
function openAtCitedTime() {
  const query = new URLSearchParams(window.location.search)
  const t = Number(query.get('t'))
  if (!query.has('t') || !Number.isFinite(t) || t < 0) return
  const segments = noteState.segments
  let i = segments.findIndex(s => t >= s.start && t < s.end)
  if (i < 0) i = segments.reduce((found, s, k) => (s.start <= t ? k : found), -1)
  if (noteState.player) noteState.player.currentTime = t
  if (i < 0) return
  highlight(i)
  const row = rowOf(i)
  if (row) row.scrollIntoView({ block: 'center' })
}

function fillMoveSelect() {
  const sel = $('move-select')
  const note = noteState.note
  sel.replaceChildren(el('option', { value: '', text: 'Top level' }), ...folders.map(f => el('option', { value: f.id, text: f.name })))
  sel.value = note && note.folderId ? note.folderId : ''
}

async function showCost(note) {
  try {
    const u = await api('GET', '/v1/usage?limit=100')
    costs = u.costs
    renderResummarize(noteState.note, costs)
    const mine = u.recent.filter(r => r.noteId === note.id)
    const total = mine.reduce((n, r) => n + r.credits, 0)
    $('note-cost').textContent = mine.length
      ? `This note has cost ${credits(total)} (${mine.map(r => `${operationText(r.operation)} ${credits(r.credits)}`).join(', ')}).`
      : 'This note has cost no credits.'
  } catch (err) { $('note-cost').textContent = explain(err) }
}

function renderNote(note) {
  noteState.note = note
  document.title = `${note.title || 'Note'} · notesvc`
  $('note-title').textContent = note.title || 'Untitled'
  $('rename-input').value = note.title
  const pin = $('pin')
  pin.setAttribute('aria-pressed', String(note.isPinned))
  pin.textContent = note.isPinned ? 'Unpin' : 'Pin'
  $('note-meta').replaceChildren(badge(note.status, stageText(note)), ' ', typeText(note.type), ' · ', when(note.dateCreated),
    note.language ? ` · language ${note.language}` : '', note.folderId ? ` · in ${folderName(note.folderId)}` : '')
  fillMoveSelect()
  $('summary').replaceChildren(note.status === 'Done' ? renderSummary(note.styleId, note.structuredContent, note.summary) : el('p', { class: 'hint', text: note.status === 'Error' ? 'Processing failed; see the status above.' : 'The summary appears here when processing is done.' }))
  renderExports(note)
  renderResummarize(note, costs)
}

async function setUpPlayer(note) {
  if (note.type !== 'audio' && note.type !== 'video') return
  if (note.mediaRemovedAt) {
    // the account's retention policy deleted the recording; the transcript and summary stay
    $('player-slot').replaceChildren(el('p', { id: 'media-removed', class: 'hint', text: `The recording was removed by the retention policy on ${note.mediaRemovedAt.slice(0, 10)}. The transcript and summary are kept.` }))
    $('player-section').hidden = false
    return
  }
  const src = `/notes/${encodeURIComponent(note.id)}/media?library=${library}&workspace=${encodeURIComponent(workspaceId())}`
  const head = await fetch(src, { method: 'GET', headers: { range: 'bytes=0-0' } }).catch(() => null)
  if (!head || (head.status !== 206 && head.status !== 200)) return
  await head.arrayBuffer().catch(() => null)
  const player = el(note.type === 'video' ? 'video' : 'audio', { id: 'player', controls: true, preload: 'metadata', src, 'aria-label': `Recording of ${note.title}` })
  player.addEventListener('timeupdate', () => {
    const t = player.currentTime
    const i = noteState.segments.findIndex(s => t >= s.start && t < s.end)
    if (i >= 0) highlight(i)
  })
  noteState.player = player
  $('player-slot').replaceChildren(player)
  $('player-section').hidden = false
}

async function showTranscript(note) {
  const { segments, speakers } = note.status === 'Done' ? await segmentsOf(note) : { segments: [], speakers: [] }
  noteState.segments = segments
  noteState.speakers = speakers
  await renderTranscript(note, segments)
  renderSuggestions(speakers)
  // when the transcript's rows are in the page (bench/edit-transcript.ts reads it)
  performance.mark('transcript-shown')
  if (note.status === 'Done' && segments.length) loadHistory()
}

/** The transcript read again (after a 412, an undo, a restore), and the note (its summary is stale now). */
async function reloadTranscript() {
  const note = await api('GET', notePath())
  renderNote(note)
  await showTranscript(note)
}

/** After an edit is shown: the note read again in the background (its summary is now stale) and the history. */
function afterEdit() {
  api('GET', notePath()).then(note => { noteState.note = note; renderResummarize(note, costs) }).catch(() => { /* the marker waits for the next read */ })
  loadHistory()
}

/** Loads and shows the note; `first`: the page's first load. */
async function loadNote(id, first) {
  let note
  try {
    note = await api('GET', `/v1/notes/${encodeURIComponent(id)}`)
  } catch (err) {
    $('note-error').hidden = false
    $('note-error').textContent = err instanceof ApiFailure && err.status === 404
      ? `There is no such note in the ${library} library. It may have been deleted${library === 'live' ? ', or it is in the sandbox library (switch on the library page)' : ''}.`
      : explain(err)
    $('note-title').textContent = 'Note not found'
    return
  }
  renderNote(note)
  if (!noteState.player && (first || note.status === 'Done') && note.processingStage !== 'awaiting_upload') await setUpPlayer(note)
  await showTranscript(note)
  if (first) openAtCitedTime()
  showCost(note)
  if (note.status === 'Summarizing') followNote(id)
}

/** While the note is processing: its stage and progress live in the badge, then the whole note once it is done. */
async function followNote(id) {
  for (;;) {
    await pause(POLL_MS)
    let s
    try { s = await noteStatus(id) } catch { return }
    const b = document.querySelector('#note-meta .badge')
    if (b) showStatus(b, s)
    if (s.status !== 'Summarizing') { loadNote(id, false); return }
  }
}

export function initNote() {
  const id = document.body.dataset.noteId
  setLibrary(library)
  const say = text => { $('action-status').textContent = text }
  const update = async (patch, done) => {
    try {
      renderNote(await api('PATCH', `/v1/notes/${encodeURIComponent(id)}`, patch))
      say(done)
    } catch (err) { say(explain(err)) }
  }
  $('rename-form').addEventListener('submit', e => { e.preventDefault(); update({ title: $('rename-input').value.trim() }, 'Renamed.') })
  $('move-select').addEventListener('change', e => update({ folderId: e.target.value || null }, e.target.value ? `Moved to ${folderName(e.target.value)}.` : 'Moved to the top level.'))
  $('pin').addEventListener('click', () => update({ isPinned: !(noteState.note && noteState.note.isPinned) }, noteState.note && noteState.note.isPinned ? 'Unpinned.' : 'Pinned.'))
  const confirmBox = $('confirm-dialog')
  $('delete').addEventListener('click', () => confirmBox.showModal())
  $('cancel-delete').addEventListener('click', () => confirmBox.close())
  $('confirm-delete').addEventListener('click', async () => {
    try {
      await api('DELETE', `/v1/notes/${encodeURIComponent(id)}`)
      window.location.assign('/')
    } catch (err) { confirmBox.close(); say(explain(err)) }
  })
  $('ask-form').addEventListener('submit', async e => {
    e.preventDefault()
    const question = $('question').value.trim()
    if (!question) return
    const entry = el('div', { class: 'qa' }, el('p', { class: 'q', text: question }), el('p', { class: 'a hint', text: 'Thinking…' }))
    $('answers').prepend(entry)
    try {
      const r = await api('POST', `/v1/notes/${encodeURIComponent(id)}/questions`, { question })
      entry.lastChild.replaceWith(el('p', { class: 'a', text: r.answer }), el('p', { class: 'cost hint', text: charged(r) }))
      $('question').value = ''
      showCost(noteState.note || { id })
    } catch (err) { entry.lastChild.replaceWith(el('p', { class: 'a error', text: explain(err) })) }
  })
  listenToTranscript($('segments'))
  onTranscriptEvents({ edited: afterEdit, reload: () => reloadTranscript().catch(err => say(explain(err))), seek })
  initHistory(() => reloadTranscript())
  initFindReplace(() => reloadTranscript())
  initSuggestions(() => reloadTranscript())
  initResummarize(() => loadNote(id, false))
  initShare(id)
  initNoteTags(id)
  loadFolders().then(fillMoveSelect).catch(err => say(explain(err))).then(() => loadNote(id, true))
}

