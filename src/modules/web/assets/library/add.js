// The library page's "Add notes" dialog: recordings uploaded with their progress in a queue and
// followed to Done, a video link summarized, pasted text saved or summarized.
import { api, ApiFailure, explain } from './api.js'
import { $, charged, credits, el } from './dom.js'
import { following, loadNotes, showRowStatus } from './list.js'
import { noteStatus, pause, POLL_MS, statusText } from './status.js'
import { renderSummary } from './summary.js'

const EXTENSION_TYPES = {
  wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/opus',
  flac: 'audio/flac', weba: 'audio/webm', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mkv: 'video/x-matroska',
}

function contentTypeOf(file) {
  if (file.type) return file.type
  const ext = (file.name.split('.').pop() || '').toLowerCase()
  return EXTENSION_TYPES[ext] || 'application/octet-stream'
}

function queueItem(name) {
  const bar = el('progress', { max: 100, value: 0, 'aria-label': `Progress of ${name}` })
  const text = el('span', { class: 'queue-state', text: 'Starting…' })
  const link = el('span', { class: 'queue-link' })
  const li = el('li', { class: 'queue-item' }, el('span', { class: 'queue-name', text: name }), bar, text, link)
  $('queue').hidden = false
  $('queue-list').prepend(li)
  return {
    li,
    set(label, fraction, kind) {
      text.textContent = label
      li.dataset.state = kind || 'busy'
      if (fraction === null) bar.removeAttribute('value')
      else bar.value = Math.round(fraction * 100)
    },
    linkTo(noteId) { link.replaceChildren(el('a', { href: `/notes/${encodeURIComponent(noteId)}`, text: 'Open note' })) },
    offerRetry(again) {
      const retry = el('button', { type: 'button', class: 'retry', text: 'Try again', onclick: () => { retry.remove(); again() } })
      link.append(' ', retry)
    },
  }
}

/** PUTs the file with XMLHttpRequest, whose upload progress events give the bytes sent. */
function putFile(upload, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(upload.method || 'PUT', upload.uploadUrl)
    for (const [k, v] of Object.entries(upload.headers || {})) xhr.setRequestHeader(k, v)
    xhr.upload.onprogress = e => { if (e.lengthComputable) onProgress(e.loaded, e.total) }
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve()
      let body = null
      try { body = JSON.parse(xhr.responseText) } catch { body = null }
      reject(new ApiFailure(xhr.status, body))
    }
    xhr.onerror = () => reject(new ApiFailure(0, { error: { message: 'The file could not be sent; check the connection and try again.' } }))
    xhr.send(file)
  })
}

async function followStatus(noteId, item) {
  for (;;) {
    let s
    try {
      s = await noteStatus(noteId)
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 429) { await pause((err.retryAfter || 5) * 1000); continue }
      item.set(explain(err), 0, 'error')
      return
    }
    if (s.hasError || s.status === 'Error') { item.set(`Failed: ${s.errorMessage || s.errorCode || 'processing failed'}`, s.progress ?? 0, 'error'); return }
    if (s.isComplete || s.status === 'Done') { item.set('Done', 1, 'done'); loadNotes(); return }
    item.set(statusText(s), typeof s.progress === 'number' ? s.progress : null, 'busy')
    showRowStatus(noteId, s)
    await pause(POLL_MS)
  }
}

async function uploadOne(file, styleId, language) {
  const item = queueItem(file.name)
  let noteId = null
  try {
    const body = { fileName: file.name.slice(0, 500), contentType: contentTypeOf(file), fileSize: file.size, styleId }
    if (language) body.language = language
    const upload = await api('POST', '/v1/uploads', body)
    noteId = upload.noteId
    following.add(noteId)
    item.linkTo(upload.noteId)
    loadNotes()
    item.set('Sending 0%', 0)
    await putFile(upload, file, (sent, total) => item.set(`Sending ${Math.floor((sent / total) * 100)}%`, sent / total))
  } catch (err) {
    item.set(explain(err), 0, 'error')
    if (noteId) following.delete(noteId)
    loadNotes()
    return
  }
  await completeAndFollow(noteId, item)
}

/** Completes a sent upload and follows it to Done; when completion is refused (credits, engine), offers to try again. */
async function completeAndFollow(noteId, item) {
  following.add(noteId)
  try {
    item.set('Starting processing…', null)
    const accepted = await api('POST', `/v1/uploads/${encodeURIComponent(noteId)}/complete`)
    item.set(`Queued (${credits(accepted.creditsCharged)})`, null)
    loadNotes()
    await followStatus(noteId, item)
  } catch (err) {
    item.set(explain(err), 0, 'error')
    item.offerRetry(() => completeAndFollow(noteId, item))
    loadNotes()
  } finally {
    following.delete(noteId)
  }
}

/** The dialog's result: the note just saved, or what went wrong. */
const showSaved = (box, note) => box.replaceChildren(el('p', {}, 'Saved: ', el('a', { href: `/notes/${encodeURIComponent(note.id)}`, text: note.title })))
const showFailure = (box, err) => box.replaceChildren(el('p', { class: 'error', text: explain(err) }))

function summaryResult(r, saveAs) {
  const box = $('dialog-result')
  const save = el('button', { type: 'button', text: 'Save as a note' })
  save.addEventListener('click', async () => {
    try {
      const note = await api('POST', '/v1/notes', { title: (r.title || 'Summary').slice(0, 500), content: r.summary, format: r.styleId, source: saveAs })
      showSaved(box, note)
      loadNotes()
    } catch (err) { showFailure(box, err) }
  })
  box.replaceChildren(
    el('h3', { text: r.title || 'Summary' }),
    renderSummary(r.styleId, r.structuredContent, r.summary),
    el('p', { class: 'hint', text: charged(r) }),
    save)
}

export function initAddDialog() {
  const dialog = $('upload-dialog')
  const files = $('files')
  let chosen = []
  const showChosen = () => { $('chosen').textContent = chosen.length ? `${chosen.length} file${chosen.length === 1 ? '' : 's'}: ${chosen.map(f => f.name).join(', ')}` : 'No files chosen.' }
  $('open-upload').addEventListener('click', () => { $('dialog-result').replaceChildren(); dialog.showModal() })
  $('close-upload').addEventListener('click', () => dialog.close())
  files.addEventListener('change', () => { chosen = [...files.files]; showChosen() })
  const drop = $('drop')
  drop.addEventListener('dragover', e => { e.preventDefault(); drop.classList.add('over') })
  drop.addEventListener('dragleave', () => drop.classList.remove('over'))
  drop.addEventListener('drop', e => {
    e.preventDefault()
    drop.classList.remove('over')
    chosen = [...e.dataTransfer.files]
    showChosen()
  })
  $('upload-form').addEventListener('submit', e => {
    e.preventDefault()
    if (!chosen.length) { $('chosen').textContent = 'Choose at least one audio or video file first.'; files.focus(); return }
    const styleId = $('upload-style').value
    const language = $('upload-language').value.trim()
    const batch = chosen
    chosen = []
    e.target.reset()
    showChosen()
    dialog.close()
    batch.forEach(f => uploadOne(f, styleId, language))
  })
  $('link-form').addEventListener('submit', async e => {
    e.preventDefault()
    const box = $('dialog-result')
    box.replaceChildren(el('p', { text: 'Fetching and summarizing the video; this takes about as long as a quick listen…' }))
    try {
      summaryResult(await api('POST', '/v1/youtube-summaries', { youtubeUrl: $('link-url').value.trim(), styleId: $('link-style').value }), 'youtube')
    } catch (err) { showFailure(box, err) }
  })
  $('text-form').addEventListener('submit', async e => {
    e.preventDefault()
    const box = $('dialog-result')
    const action = e.submitter ? e.submitter.value : 'note'
    const title = $('text-title').value.trim()
    const text = $('text-body').value
    try {
      if (action === 'summary') {
        box.replaceChildren(el('p', { text: 'Summarizing…' }))
        const r = await api('POST', '/v1/summaries', { text, styleId: $('text-style').value })
        summaryResult({ ...r, title: title || r.title }, 'text')
      } else {
        const note = await api('POST', '/v1/notes', { title: title || text.trim().split('\n')[0].slice(0, 80) || 'Untitled', content: text, source: 'web' })
        showSaved(box, note)
        e.target.reset()
        loadNotes()
      }
    } catch (err) { showFailure(box, err) }
  })
}
