// A note's downloads: the whole note (summary with its attendees, decisions and action items, then the
// transcript) as Markdown or DOCX (GET …/export), and the transcript's formats (GET …/transcript), each
// fetched with the session's headers (a plain link cannot send them) and saved as a file.
import { ApiFailure, explain, sessionHeaders } from './api.js'
import { $, el } from './dom.js'

const FORMATS = [
  ['srt', 'SRT subtitles', 'srt'],
  ['vtt', 'WebVTT subtitles', 'vtt'],
  ['txt', 'Plain text', 'txt'],
  ['json', 'JSON', 'json'],
  ['verbose_json', 'JSON with segments', 'verbose.json'],
]
/** The whole note (summary with its attendees, decisions and action items, then the transcript): GET …/export. */
const NOTE_FORMATS = [['md', 'Note as Markdown', 'md'], ['docx', 'Note as Word (DOCX)', 'docx']]
export function renderExports(note) {
  const box = $('exports')
  if (note.status !== 'Done') { box.replaceChildren(); return }
  const link = (path, attr, format, label, ext) => el('a', {
    class: 'button-link', href: path, download: `${note.title || note.id}.${ext}`, [attr]: format, text: label,
    onclick: e => { e.preventDefault(); download(note, path, ext) },
  })
  const id = encodeURIComponent(note.id)
  box.replaceChildren(el('span', { class: 'hint', text: 'Download: ' }),
    ...NOTE_FORMATS.map(([format, label, ext]) => link(`/v1/notes/${id}/export?format=${format}`, 'data-export', format, label, ext)),
    ...FORMATS.map(([format, label, ext]) => link(`/v1/notes/${id}/transcript?format=${format}`, 'data-format', format, label, ext)))
}

/** Fetches an export with the session's headers (a plain link cannot send them) and saves it as a file. */
async function download(note, path, ext) {
  try {
    const res = await fetch(path, { headers: sessionHeaders() })
    if (!res.ok) {
      let body = null
      try { body = await res.json() } catch { body = null }
      throw new ApiFailure(res.status, body)
    }
    const blob = await res.blob()
    const url = URL.createObjectURL(blob)
    const a = el('a', { href: url, download: `${(note.title || note.id).replace(/[\\/:*?"<>|]+/g, '_')}.${ext}` })
    document.body.append(a)
    a.click()
    a.remove()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  } catch (err) { $('action-status').textContent = explain(err) }
}

