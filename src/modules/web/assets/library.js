// The web library's one script (docs/decisions.md "The web library"). It calls the same /v1 API as
// every client, with the signed-in session: the session cookie plus the page's CSRF token in
// X-CSRF-Token, and X-Notesvc-Library to pick the live or the sandbox library. Every piece of text from
// the API is put into the page with textContent, never as HTML.
'use strict'

const CSRF = document.querySelector('meta[name="csrf-token"]').content
const LIBRARY_KEY = 'notesvc.library'
const PAGE_SIZE = 50
const POLL_MS = 1500
const STAGES = {
  awaiting_upload: 'Waiting for the file',
  queued: 'Queued',
  converting: 'Converting',
  transcribing: 'Transcribing',
  summarizing: 'Summarizing',
}
const TYPES = { audio: 'Audio', video: 'Video', youtube: 'Video link', import: 'Text', pdf: 'PDF' }
const FORMATS = [
  ['srt', 'SRT subtitles', 'srt'],
  ['vtt', 'WebVTT subtitles', 'vtt'],
  ['txt', 'Plain text', 'txt'],
  ['json', 'JSON', 'json'],
  ['verbose_json', 'JSON with segments', 'verbose.json'],
]
const EXTENSION_TYPES = {
  wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4', aac: 'audio/aac', ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/opus',
  flac: 'audio/flac', weba: 'audio/webm', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mkv: 'video/x-matroska',
}

let library = localStorage.getItem(LIBRARY_KEY) === 'sandbox' ? 'sandbox' : 'live'

// ---------------------------------------------------------------- small helpers

/** An element with attributes, properties and children; strings become text nodes (escaped by construction). */
function el(tag, props = {}, ...children) {
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
const $ = id => document.getElementById(id)

class ApiFailure extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {}
    super(e.message || `The server answered ${status}.`)
    this.status = status
    this.code = e.code || ''
    this.retryAfter = e.retry_after_seconds || 0
  }
}

/** A call to the API as the signed-in user; the parsed body, or an ApiFailure with the server's message. */
async function api(method, path, body) {
  const headers = { 'x-csrf-token': CSRF, 'x-notesvc-library': library, accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' })
  } catch {
    throw new ApiFailure(0, { error: { message: 'The server could not be reached. Check that it is running and try again.' } })
  }
  const remaining = res.headers.get('x-credits-remaining')
  if (remaining !== null) showBalance(Number(remaining))
  if (res.status === 204) return null
  const text = await res.text()
  let parsed = null
  try { parsed = text ? JSON.parse(text) : null } catch { parsed = null }
  if (!res.ok) {
    if (res.status === 401) window.location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`)
    throw new ApiFailure(res.status, parsed)
  }
  return parsed
}

/** What went wrong, in words, with what to do. */
function explain(err) {
  if (!(err instanceof ApiFailure)) return String(err && err.message ? err.message : err)
  if (err.status === 402) {
    const m = /needs (\d+) credits? but (\d+) remain/.exec(err.message)
    if (m) {
      const missing = Number(m[1]) - Number(m[2])
      return `Not enough credits: this needs ${m[1]}, you have ${m[2]}, so ${missing} more credit${missing === 1 ? ' is' : 's are'} missing. ${err.message.slice(m.index + m[0].length).replace(/^[.\s]+/, '')}`.trim()
    }
    return `Not enough credits. ${err.message}`
  }
  if (err.status === 415) return `This file type cannot be processed. Audio (MP3, WAV, M4A, OGG, FLAC, WebM…) and video (MP4, MOV, WebM, MKV…) work. ${err.message}`
  if (err.status === 413) return `The file is too large. ${err.message}`
  if (err.status === 429) return `Too many requests at once; wait ${err.retryAfter || 'a few'} seconds and try again.`
  return err.message
}

function showBalance(n) {
  if (Number.isFinite(n)) $('balance').textContent = String(n)
}
async function refreshBalance() {
  try { showBalance((await api('GET', '/v1/usage?limit=1')).balance.totalRemaining) } catch { /* the header keeps the last figure */ }
}

function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return ''
  const s = Math.round(seconds)
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const r = String(s % 60).padStart(2, '0')
  return h ? `${h}:${String(m).padStart(2, '0')}:${r}` : `${m}:${r}`
}
function clock(seconds) {
  const s = Math.floor(seconds)
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
}
function when(iso) {
  const d = new Date(iso)
  return el('time', { dateTime: iso, text: d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) })
}
function statusText(s) {
  if (s.status === 'Done') return 'Done'
  if (s.status === 'Error') return `Failed${s.errorMessage ? `: ${s.errorMessage}` : ''}`
  const stage = STAGES[s.processingStage] || 'Processing'
  return typeof s.progress === 'number' && s.processingStage === 'transcribing' ? `${stage} ${Math.round(s.progress * 100)}%` : stage
}
function badge(status, text) {
  return el('span', { class: `badge ${String(status).toLowerCase()}`, text: text || status })
}

/**
 * A snippet with the matched words marked. The search marks each match «like this» (the note's own
 * guillemets are stored as ‹ ›, so every « » in a snippet is a marker; docs/decisions.md "Searching
 * notes"). Only the marked words become <mark>; the rest is inserted as text, never as HTML.
 */
function highlighted(snippet) {
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

// ---------------------------------------------------------------- the library

const state = { folders: [], folderId: '', status: '', type: '', q: '', offset: 0, searching: false, loadSeq: 0 }

function readLocation() {
  const p = new URLSearchParams(location.search)
  state.folderId = p.get('folder') || ''
  state.status = p.get('status') || ''
  state.type = p.get('type') || ''
  state.q = p.get('q') || ''
  state.offset = Math.max(0, Number(p.get('offset')) || 0)
}
function writeLocation() {
  const p = new URLSearchParams()
  if (state.folderId) p.set('folder', state.folderId)
  if (state.status) p.set('status', state.status)
  if (state.type) p.set('type', state.type)
  if (state.q) p.set('q', state.q)
  if (state.offset) p.set('offset', String(state.offset))
  const qs = p.toString()
  history.replaceState(null, '', qs ? `/?${qs}` : '/')
}

async function loadFolders() {
  const list = await api('GET', '/v1/folders')
  state.folders = list.data
  if ($('folders')) renderFolders()
  else if ($('move-select')) fillMoveSelect()
}

function folderName(id) {
  const f = state.folders.find(x => x.id === id)
  return f ? f.name : ''
}

function renderFolders() {
  const ul = $('folders')
  ul.setAttribute('aria-busy', 'false')
  const entry = (id, name, color) => {
    const current = state.folderId === id
    const link = el('a', {
      href: id ? `/?folder=${encodeURIComponent(id)}` : '/', class: 'folder-link', 'aria-current': current ? 'true' : null,
      onclick: e => { e.preventDefault(); state.folderId = id; state.offset = 0; renderFolders(); loadNotes() },
    }, el('span', { class: 'dot', 'aria-hidden': 'true' }), name)
    if (color) link.firstChild.style.backgroundColor = color
    return link
  }
  const items = [el('li', {}, entry('', 'All notes', null)), el('li', {}, entry('null', 'Top level (no folder)', null))]
  for (const f of state.folders) {
    const editBtn = el('button', { type: 'button', class: 'icon', 'aria-label': `Edit folder ${f.name}`, text: 'Edit', 'aria-expanded': 'false' })
    const li = el('li', { class: 'folder', 'data-folder-id': f.id }, el('div', { class: 'folder-row' }, entry(f.id, f.name, f.color), editBtn))
    editBtn.addEventListener('click', () => {
      const open = li.querySelector('form')
      if (open) { open.remove(); editBtn.setAttribute('aria-expanded', 'false'); return }
      editBtn.setAttribute('aria-expanded', 'true')
      li.append(folderEditor(f))
      li.querySelector('input').focus()
    })
    items.push(li)
  }
  ul.replaceChildren(...items)
  $('library-title').textContent = state.folderId === '' ? 'All notes' : state.folderId === 'null' ? 'Top level' : folderName(state.folderId) || 'Folder'
}

function folderEditor(f) {
  const uid = f.id.replace(/[^A-Za-z0-9_-]/g, '')
  const name = el('input', { id: `fname-${uid}`, value: f.name, maxLength: 200, required: true })
  const color = el('input', { id: `fcolor-${uid}`, type: 'color', value: /^#[0-9a-f]{6}$/i.test(f.color || '') ? f.color : '#2b59c3' })
  const msg = el('p', { class: 'form-msg', role: 'status' })
  const form = el('form', { class: 'folder-edit' },
    el('label', { htmlFor: name.id, text: 'Name' }), name,
    el('label', { htmlFor: color.id, text: 'Colour' }), color,
    el('div', { class: 'buttons' },
      el('button', { type: 'submit', text: 'Save' }),
      el('button', {
        type: 'button', class: 'danger', text: 'Delete folder',
        onclick: async () => {
          if (!confirm(`Delete the folder “${f.name}”? Its notes are kept and moved to the top level.`)) return
          try {
            await api('DELETE', `/v1/folders/${encodeURIComponent(f.id)}`)
            if (state.folderId === f.id) state.folderId = ''
            await loadFolders()
            await loadNotes()
          } catch (err) { msg.textContent = explain(err) }
        },
      })),
    msg)
  form.addEventListener('submit', async e => {
    e.preventDefault()
    try {
      await api('PATCH', `/v1/folders/${encodeURIComponent(f.id)}`, { name: name.value.trim(), color: color.value })
      await loadFolders()
    } catch (err) { msg.textContent = explain(err) }
  })
  return form
}

async function durationsOf(ids) {
  if (!ids.length) return {}
  const res = await fetch(`/web/durations?ids=${ids.map(encodeURIComponent).join(',')}`, { headers: { 'x-csrf-token': CSRF, 'x-notesvc-library': library } })
  return res.ok ? (await res.json()).durations : {}
}

async function loadNotes() {
  writeLocation()
  const seq = ++state.loadSeq
  const p = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(state.offset) })
  if (state.folderId) p.set('folderId', state.folderId)
  if (state.status) p.set('status', state.status)
  if (state.type) p.set('type', state.type)
  if (state.q) p.set('q', state.q)
  $('list-status').textContent = state.q ? `Searching for “${state.q}”…` : 'Loading notes…'
  $('notes').setAttribute('aria-busy', 'true')
  let page
  try {
    page = await api('GET', `/v1/notes?${p}`)
  } catch (err) {
    if (seq === state.loadSeq) { $('list-status').textContent = explain(err); $('notes').setAttribute('aria-busy', 'false') }
    return
  }
  const lengths = await durationsOf(page.data.map(n => n.id)).catch(() => ({}))
  if (seq !== state.loadSeq) return
  renderNotes(page, lengths)
}

function renderNotes(page, lengths) {
  const ul = $('notes')
  ul.setAttribute('aria-busy', 'false')
  const items = page.data.map(n => {
    const meta = el('p', { class: 'meta' },
      el('span', { text: TYPES[n.type] || n.type }),
      lengths[n.id] !== undefined ? el('span', { text: duration(lengths[n.id]), title: 'length of the recording' }) : null,
      when(n.dateCreated),
      n.folderId ? el('span', { class: 'in-folder', text: folderName(n.folderId) }) : null)
    const li = el('li', { class: 'note', 'data-note-id': n.id },
      el('div', { class: 'note-line' },
        el('a', { href: `/notes/${encodeURIComponent(n.id)}`, class: 'note-title', text: n.title || 'Untitled' }),
        n.isPinned ? el('span', { class: 'pin', text: 'Pinned' }) : null,
        badge(n.status, n.status === 'Summarizing' ? (STAGES[n.processingStage] || 'Processing') : n.status)),
      meta)
    if (typeof n.snippet === 'string' && n.snippet) li.append(el('p', { class: 'snippet' }, highlighted(n.snippet)))
    return li
  })
  ul.replaceChildren(...items)
  // notes still waiting for their file change only when a client completes them: not polled
  for (const n of page.data) if (n.status === 'Summarizing' && n.processingStage !== 'awaiting_upload' && !following.has(n.id)) watchRow(n.id, state.loadSeq)
  const from = state.offset + 1
  const to = state.offset + page.data.length
  const filtered = state.q || state.folderId || state.status || state.type
  $('list-status').textContent = page.data.length === 0
    ? (state.offset ? 'No more notes.' : state.q ? `No notes match “${state.q}”.` : filtered ? 'No notes match these filters.' : 'No notes yet. Choose “Add notes…” to upload a recording or paste text.')
    : state.q ? `Notes matching “${state.q}”: ${from}–${to}` : `Notes ${from}–${to}`
  $('page-info').textContent = page.data.length ? `${from}–${to}` : ''
  $('newer').disabled = state.offset === 0
  $('older').disabled = !page.pagination.hasMore
}

/** Keeps the status of a listed note that is still processing up to date, in place (focus stays where it is). */
async function watchRow(id, seq) {
  while (seq === state.loadSeq) {
    await new Promise(r => setTimeout(r, POLL_MS * 2))
    if (seq !== state.loadSeq || following.has(id)) return
    let s
    try { s = await api('GET', `/v1/notes/${encodeURIComponent(id)}/status`) } catch { return }
    if (!showRowStatus(id, s) || s.status !== 'Summarizing') return
  }
}

/** Shows a note's status on its row of the list, if it is listed; false when it is not. */
function showRowStatus(id, s) {
  const row = document.querySelector(`li.note[data-note-id="${CSS.escape(id)}"] .badge`)
  if (!row) return false
  row.className = `badge ${s.status.toLowerCase()}`
  row.textContent = statusText(s)
  return true
}

function setLibrary(next) {
  library = next
  localStorage.setItem(LIBRARY_KEY, next)
  document.body.classList.toggle('sandbox', next === 'sandbox')
  const banner = $('sandbox-banner')
  if (banner) banner.hidden = next !== 'sandbox'
}

function initLibrary() {
  readLocation()
  $('q').value = state.q
  $('status-filter').value = state.status
  $('type-filter').value = state.type
  $('sandbox-switch').checked = library === 'sandbox'
  setLibrary(library)

  $('search').addEventListener('submit', e => { e.preventDefault(); state.q = $('q').value.trim(); state.offset = 0; loadNotes() })
  $('q').addEventListener('search', () => { if ($('q').value === '' && state.q) { state.q = ''; state.offset = 0; loadNotes() } })
  $('status-filter').addEventListener('change', e => { state.status = e.target.value; state.offset = 0; loadNotes() })
  $('type-filter').addEventListener('change', e => { state.type = e.target.value; state.offset = 0; loadNotes() })
  $('newer').addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE_SIZE); loadNotes().then(() => $('main').focus()) })
  $('older').addEventListener('click', () => { state.offset += PAGE_SIZE; loadNotes().then(() => $('main').focus()) })
  $('sandbox-switch').addEventListener('change', e => {
    setLibrary(e.target.checked ? 'sandbox' : 'live')
    state.folderId = ''
    state.offset = 0
    loadFolders().then(loadNotes, err => { $('list-status').textContent = explain(err) })
  })
  $('new-folder').addEventListener('submit', async e => {
    e.preventDefault()
    const form = e.target
    try {
      await api('POST', '/v1/folders', { name: $('new-folder-name').value.trim(), color: $('new-folder-color').value })
      form.reset()
      form.closest('details').open = false
      await loadFolders()
    } catch (err) { alert(explain(err)) }
  })
  initAddDialog()
  loadFolders().then(loadNotes, err => { $('list-status').textContent = explain(err) })
}

// ---------------------------------------------------------------- adding notes

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

/** the notes whose upload this page follows (their rows are updated by the follower) */
const following = new Set()

async function followStatus(noteId, item) {
  for (;;) {
    let s
    try {
      s = await api('GET', `/v1/notes/${encodeURIComponent(noteId)}/status`)
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 429) { await new Promise(r => setTimeout(r, (err.retryAfter || 5) * 1000)); continue }
      item.set(explain(err), 0, 'error')
      return
    }
    if (s.hasError || s.status === 'Error') { item.set(`Failed: ${s.errorMessage || s.errorCode || 'processing failed'}`, s.progress ?? 0, 'error'); return }
    if (s.isComplete || s.status === 'Done') { item.set('Done', 1, 'done'); loadNotes(); return }
    item.set(statusText(s), typeof s.progress === 'number' ? s.progress : null, 'busy')
    showRowStatus(noteId, s)
    await new Promise(r => setTimeout(r, POLL_MS))
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
    item.set(`Queued (${accepted.creditsCharged} credit${accepted.creditsCharged === 1 ? '' : 's'})`, null)
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

function summaryResult(r, saveAs) {
  const box = $('dialog-result')
  const save = el('button', { type: 'button', text: 'Save as a note' })
  save.addEventListener('click', async () => {
    try {
      const note = await api('POST', '/v1/notes', { title: (r.title || 'Summary').slice(0, 500), content: r.summary, format: r.styleId, source: saveAs })
      box.replaceChildren(el('p', {}, 'Saved: ', el('a', { href: `/notes/${encodeURIComponent(note.id)}`, text: note.title })))
      loadNotes()
    } catch (err) { box.replaceChildren(el('p', { class: 'error', text: explain(err) })) }
  })
  box.replaceChildren(
    el('h3', { text: r.title || 'Summary' }),
    renderSummary(r.styleId, r.structuredContent, r.summary),
    el('p', { class: 'hint', text: `${r.creditsCharged} credit${r.creditsCharged === 1 ? '' : 's'} charged.${r.notice ? ` ${r.notice}` : ''}` }),
    save)
}

function initAddDialog() {
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
    } catch (err) { box.replaceChildren(el('p', { class: 'error', text: explain(err) })) }
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
        box.replaceChildren(el('p', {}, 'Saved: ', el('a', { href: `/notes/${encodeURIComponent(note.id)}`, text: note.title })))
        e.target.reset()
        loadNotes()
      }
    } catch (err) { box.replaceChildren(el('p', { class: 'error', text: explain(err) })) }
  })
}

// ---------------------------------------------------------------- a note

/** The summary in its style: sections, bullets, decisions and action items as such; plain text otherwise. */
function renderSummary(styleId, structured, summary) {
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

const noteState = { note: null, segments: [], player: null, current: -1 }

async function segmentsOf(note) {
  const t = note.structuredContent && note.structuredContent.transcript
  if (t && Array.isArray(t.segments) && t.segments.length) return t.segments
  // Notes in other styles: the timestamped segments of the transcript formats, where the server has them.
  try {
    const v = await api('GET', `/v1/notes/${encodeURIComponent(note.id)}/transcript?format=verbose_json`)
    // text notes and notes transcribed before times were kept have none (`timed: false`): no invented 00:00
    if (v && v.timed && Array.isArray(v.segments) && v.segments.length) return v.segments
  } catch { /* plain transcript below */ }
  return []
}

function renderTranscript(note, segments) {
  const ol = $('segments')
  if (!segments.length) {
    ol.replaceChildren(...String(note.originalTranscription || '').split(/\n+/).filter(Boolean).map(t => el('li', { class: 'segment plain' }, el('span', { class: 'text', text: t }))))
    if (!ol.childNodes.length) ol.replaceChildren(el('li', { class: 'hint', text: note.status === 'Done' ? 'This note has no transcript.' : 'The transcript appears here when processing is done.' }))
    return
  }
  ol.replaceChildren(...segments.map((s, i) => {
    const btn = el('button', {
      type: 'button', class: 'segment', 'data-start': String(s.start), title: 'Play from here',
      onclick: () => seek(i),
    }, el('span', { class: 'ts', text: clock(s.start) }), el('span', { class: 'text', text: String(s.text).trim() }))
    return el('li', {}, btn)
  }))
}

function seek(i) {
  const s = noteState.segments[i]
  const player = noteState.player
  if (!s || !player) return
  player.currentTime = s.start
  highlight(i)
  player.play().catch(() => { /* autoplay may be refused; the position is set */ })
}

function highlight(i) {
  if (i === noteState.current) return
  const buttons = $('segments').querySelectorAll('button.segment')
  if (noteState.current >= 0 && buttons[noteState.current]) { buttons[noteState.current].classList.remove('current'); buttons[noteState.current].removeAttribute('aria-current') }
  noteState.current = i
  if (i >= 0 && buttons[i]) {
    buttons[i].classList.add('current')
    buttons[i].setAttribute('aria-current', 'true')
    const r = buttons[i].getBoundingClientRect()
    if (r.top < 0 || r.bottom > window.innerHeight) buttons[i].scrollIntoView({ block: 'nearest' })
  }
}

function fillMoveSelect() {
  const sel = $('move-select')
  const note = noteState.note
  sel.replaceChildren(el('option', { value: '', text: 'Top level' }), ...state.folders.map(f => el('option', { value: f.id, text: f.name })))
  sel.value = note && note.folderId ? note.folderId : ''
}

function renderExports(note) {
  const box = $('exports')
  if (note.status !== 'Done') { box.replaceChildren(); return }
  box.replaceChildren(el('span', { class: 'hint', text: 'Download: ' }), ...FORMATS.map(([format, label, ext]) => el('a', {
    class: 'button-link', href: `/v1/notes/${encodeURIComponent(note.id)}/transcript?format=${format}`, download: `${note.title || note.id}.${ext}`,
    'data-format': format, text: label,
    onclick: e => { e.preventDefault(); download(note, format, ext) },
  })))
}

/** Fetches an export with the session's headers (a plain link cannot send them) and saves it as a file. */
async function download(note, format, ext) {
  try {
    const res = await fetch(`/v1/notes/${encodeURIComponent(note.id)}/transcript?format=${format}`, { headers: { 'x-csrf-token': CSRF, 'x-notesvc-library': library } })
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

async function showCost(note) {
  try {
    const u = await api('GET', '/v1/usage?limit=100')
    const mine = u.recent.filter(r => r.noteId === note.id)
    const total = mine.reduce((n, r) => n + r.credits, 0)
    $('note-cost').textContent = mine.length
      ? `This note has cost ${total} credit${total === 1 ? '' : 's'} (${mine.map(r => `${r.operation} ${r.credits}`).join(', ')}).`
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
  const stateText = note.status === 'Summarizing' ? (STAGES[note.processingStage] || 'Processing') : note.status
  $('note-meta').replaceChildren(badge(note.status, stateText), ' ', TYPES[note.type] || note.type, ' · ', when(note.dateCreated),
    note.language ? ` · language ${note.language}` : '', note.folderId ? ` · in ${folderName(note.folderId)}` : '')
  fillMoveSelect()
  $('summary').replaceChildren(note.status === 'Done' ? renderSummary(note.styleId, note.structuredContent, note.summary) : el('p', { class: 'hint', text: note.status === 'Error' ? 'Processing failed; see the status above.' : 'The summary appears here when processing is done.' }))
  renderExports(note)
}

async function setUpPlayer(note) {
  if (note.type !== 'audio' && note.type !== 'video') return
  const src = `/notes/${encodeURIComponent(note.id)}/media?library=${library}`
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
  noteState.segments = note.status === 'Done' ? await segmentsOf(note) : []
  renderTranscript(note, noteState.segments)
  showCost(note)
  if (note.status === 'Summarizing') followNote(id)
}

/** While the note is processing: its stage and progress live in the badge, then the whole note once it is done. */
async function followNote(id) {
  for (;;) {
    await new Promise(r => setTimeout(r, POLL_MS))
    let s
    try { s = await api('GET', `/v1/notes/${encodeURIComponent(id)}/status`) } catch { return }
    const b = document.querySelector('#note-meta .badge')
    if (b) { b.className = `badge ${s.status.toLowerCase()}`; b.textContent = statusText(s) }
    if (s.status !== 'Summarizing') { loadNote(id, false); return }
  }
}

function initNote() {
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
      entry.lastChild.replaceWith(el('p', { class: 'a', text: r.answer }), el('p', { class: 'cost hint', text: `${r.creditsCharged} credit${r.creditsCharged === 1 ? '' : 's'} charged.${r.notice ? ` ${r.notice}` : ''}` }))
      $('question').value = ''
      showCost(noteState.note || { id })
    } catch (err) { entry.lastChild.replaceWith(el('p', { class: 'a error', text: explain(err) })) }
  })
  loadFolders().catch(err => say(explain(err))).then(() => loadNote(id, true))
}

if (document.body.dataset.view === 'note') initNote()
else initLibrary()
refreshBalance()
