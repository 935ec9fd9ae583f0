// A transcript's history on its page: the revisions (version, who, when, what) with Restore, and undo
// and redo, all through the revisions API (GET …/revisions, POST …/revisions/{v}/restore with
// If-Match), so they hold across reloads and browsers. Undo and redo are restores; which restore was
// an undo or a redo is read back from each revision's `restoredFrom` (undoStacks below).
import { apiCall, ApiFailure, explain, versionOf } from './api.js'
import { $, el, when } from './dom.js'
import { noteState, notePath, say } from './note-state.js'

const OPERATIONS = {
  transcribed: 'As transcribed',
  updateNoteSegment: 'Corrected a segment',
  updateNoteSpeaker: 'Changed a speaker',
  restoreNoteRevision: 'Restored',
}
const operationWords = r => (r.restoredFrom !== null && r.restoredFrom !== undefined ? `Restored version ${r.restoredFrom}` : OPERATIONS[r.operation] || r.operation)
const WHO = { user: 'you, in the browser', key: 'an API key', oauth: 'an app', sso: 'single sign-on' }
const whoWords = actor => (actor && actor.type ? WHO[actor.type] || actor.type : 'the speech engine')

let revisions = []
let stacks = { undo: [], redo: [] }
let reloadTranscript = async () => {}

/**
 * The undo and redo stacks the revisions make, oldest first: an edit moves the transcript from one
 * content to another (a content is named by the version that first had it); a restore that brings back
 * where the last edit came from is its undo, one that brings back where the last undone edit went is
 * its redo, and any other restore is an edit of its own (it clears redo, as any edit does).
 */
function undoStacks(list) {
  const content = new Map([[0, 0]])
  const undo = []
  let redo = []
  let at = 0
  for (const r of [...list].sort((a, b) => a.version - b.version)) {
    if (r.version === 0) continue
    if (r.restoredFrom === null || r.restoredFrom === undefined) {
      undo.push({ from: at, to: r.version })
      redo = []
      at = r.version
    } else {
      const target = content.get(r.restoredFrom) ?? r.restoredFrom
      const last = undo.at(-1)
      const undone = redo.at(-1)
      if (last && last.to === at && last.from === target) redo.push(undo.pop())
      else if (undone && undone.from === at && undone.to === target) undo.push(redo.pop())
      else { undo.push({ from: at, to: target }); redo = [] }
      at = target
    }
    content.set(r.version, at)
  }
  return { undo, redo }
}

function renderButtons() {
  $('undo').disabled = !stacks.undo.length
  $('redo').disabled = !stacks.redo.length
}

function renderList() {
  const list = $('revisions')
  if (!revisions.length) {
    list.replaceChildren(el('li', { class: 'hint', text: 'No changes yet: the transcript is as transcribed.' }))
    return
  }
  const current = revisions[0].version
  list.replaceChildren(...revisions.map(r => el('li', { class: 'revision', 'data-version': String(r.version) },
    el('span', { class: 'rev-version', text: `Version ${r.version}` }),
    el('span', { class: 'rev-what', text: operationWords(r) }),
    el('span', { class: 'rev-who hint' }, `by ${whoWords(r.actor)}, `, when(r.createdAt)),
    r.version === current
      ? el('span', { class: 'rev-current hint', text: 'Current' })
      : el('button', { type: 'button', class: 'secondary restore', text: 'Restore', 'aria-label': `Restore version ${r.version}`, onclick: () => restore(r.version, `Version ${r.version} restored.`) }))))
}

/** Reads the revisions again and shows them; the undo and redo buttons follow. */
export async function loadHistory() {
  try {
    revisions = (await apiCall('GET', notePath('/revisions'))).body.data
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 409) revisions = []
    else { say(explain(err)); return }
  }
  stacks = undoStacks(revisions)
  renderButtons()
  renderList()
}

/** Restores `version` (If-Match the version read), then shows the transcript and history again. */
async function restore(version, done) {
  try {
    const { etag } = await apiCall('POST', notePath(`/revisions/${version}/restore`), undefined, { 'if-match': `"${noteState.version}"` })
    noteState.version = versionOf(etag)
    await reloadTranscript()
    say(done)
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 412) {
      await reloadTranscript()
      say('Someone changed this transcript meanwhile; reloaded. Undo or restore again if it is still needed.')
    } else say(explain(err))
  }
  await loadHistory()
}

function undo() {
  const last = stacks.undo.at(-1)
  if (last) return restore(last.from, `Undone: the transcript is back at version ${last.from}.`)
}
function redo() {
  const next = stacks.redo.at(-1)
  if (next) return restore(next.to, `Redone: the transcript is at version ${next.to} again.`)
}

const typing = t => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))

/** The buttons, and Ctrl+Z / Ctrl+Shift+Z (Cmd on a Mac; Ctrl+Y too) outside a text field. */
export function initHistory(reload) {
  reloadTranscript = reload
  $('undo').addEventListener('click', undo)
  $('redo').addEventListener('click', redo)
  document.addEventListener('keydown', e => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey || typing(e.target)) return
    const key = e.key.toLowerCase()
    if (key === 'z' && !e.shiftKey) { e.preventDefault(); undo() } else if ((key === 'z' && e.shiftKey) || key === 'y') { e.preventDefault(); redo() }
  })
}
