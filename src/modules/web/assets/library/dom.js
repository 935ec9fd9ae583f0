// The pages' building blocks: elements made from data (text always through textContent, never as
// HTML) and how values read on the page.

/** An element with attributes, properties and children; strings become text nodes (escaped by construction). */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'class') node.className = v
    else if (k === 'text') node.textContent = v
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else if (k in node && k !== 'list') node[k] = v
    else node.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : String(c))
  return node
}
export const $ = id => document.getElementById(id)

const TYPES = { audio: 'Audio', video: 'Video', youtube: 'Video link', import: 'Text', pdf: 'PDF' }
export const typeText = type => TYPES[type] || type

/**
 * What a charge was for, as a reader names it: the usage rows carry the operation's id (`completeUpload`),
 * which is the API's name, not a word for people. An operation not listed here shows its id.
 */
const OPERATIONS = {
  completeUpload: 'Recording upload',
  liveTranscription: 'Live recording',
  createTranscription: 'Transcription',
  createAudioTranscription: 'Transcription (OpenAI API)',
  createSummary: 'Text summary',
  createYoutubeSummary: 'Video link summary',
  askNoteQuestion: 'Question',
  askLibrary: 'Question to the library',
  createNoteSummary: 'Summary made again',
  topUp: 'Credits added',
}
export const operationText = id => OPERATIONS[id] || id

export const credits = n => `${n} credit${n === 1 ? '' : 's'}`
/** What a charged call took, with the server's notice if any. */
export const charged = r => `${credits(r.creditsCharged)} charged.${r.notice ? ` ${r.notice}` : ''}`

export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return ''
  const s = Math.round(seconds)
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const r = String(s % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`
}
export function clock(seconds) {
  const s = Math.floor(seconds)
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
}
export function when(iso) {
  const d = new Date(iso)
  return el('time', { dateTime: iso, text: d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) })
}

/**
 * A snippet with the matched words marked. The search marks each match «like this» (the note's own
 * guillemets are stored as ‹ ›, so every « » in a snippet is a marker; docs/decisions.md "Searching
 * notes"). Only the marked words become <mark>; the rest is inserted as text, never as HTML.
 */
export function highlighted(snippet) {
  const out = document.createDocumentFragment()
  const markers = /«([^«»]*)»/g
  let at = 0
  for (let m; (m = markers.exec(snippet));) {
    out.append(snippet.slice(at, m.index), el('mark', { text: m[1] }))
    at = m.index + m[0].length
  }
  out.append(snippet.slice(at))
  return out
}
