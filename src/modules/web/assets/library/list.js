// The library page (`/`): the folders, the search and filters, one page of notes (its place in the
// address), and the rows of notes still processing, kept up to date in place.
import { api, explain, library, sessionHeaders, setLibrary } from './api.js'
import { $, duration, el, highlighted, typeText, when } from './dom.js'
import { folderName, folders, loadFolders } from './folders.js'
import { badge, noteStatus, pause, POLL_MS, showStatus, stageText } from './status.js'
import { renderTagFilter, rowTags } from './tags.js'

const PAGE_SIZE = 50

const state = { folderId: '', status: '', type: '', q: '', tags: [], offset: 0, searching: false, loadSeq: 0 }

/** the notes whose upload this page follows (their rows are updated by the follower) */
export const following = new Set()

function readLocation() {
  const p = new URLSearchParams(location.search)
  state.folderId = p.get('folder') || ''
  state.status = p.get('status') || ''
  state.type = p.get('type') || ''
  state.q = p.get('q') || ''
  state.tags = p.getAll('tag').filter(Boolean)
  state.offset = Math.max(0, Number(p.get('offset')) || 0)
}
/** The filters that are set, as query parameters; the folder is `folder` in the page's address, `folderId` in the API's. */
function setFilters(p, folderKey) {
  if (state.folderId) p.set(folderKey, state.folderId)
  if (state.status) p.set('status', state.status)
  if (state.type) p.set('type', state.type)
  if (state.q) p.set('q', state.q)
  for (const name of state.tags) p.append('tag', name)
}
function writeLocation() {
  const p = new URLSearchParams()
  setFilters(p, 'folder')
  if (state.offset) p.set('offset', String(state.offset))
  const qs = p.toString()
  history.replaceState(null, '', qs ? `/?${qs}` : '/')
}

/** Loads the folders and shows them in the sidebar. */
async function refreshFolders() {
  await loadFolders()
  renderFolders()
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
  for (const f of folders) {
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
            await refreshFolders()
            await loadNotes()
          } catch (err) { msg.textContent = explain(err) }
        },
      })),
    msg)
  form.addEventListener('submit', async e => {
    e.preventDefault()
    try {
      await api('PATCH', `/v1/folders/${encodeURIComponent(f.id)}`, { name: name.value.trim(), color: color.value })
      await refreshFolders()
    } catch (err) { msg.textContent = explain(err) }
  })
  return form
}

async function durationsOf(ids) {
  if (!ids.length) return {}
  const res = await fetch(`/web/durations?ids=${ids.map(encodeURIComponent).join(',')}`, { headers: sessionHeaders() })
  return res.ok ? (await res.json()).durations : {}
}

/** Adds a tag to the list's filter (a chip chosen on a row) or takes it off; the list from its first page. */
function filterByTag(name, on) {
  const key = name.toLowerCase()
  state.tags = state.tags.filter(t => t.toLowerCase() !== key)
  if (on) state.tags.push(name)
  state.offset = 0
  loadNotes()
}

export async function loadNotes() {
  writeLocation()
  renderTagFilter(state.tags, name => filterByTag(name, false))
  const seq = ++state.loadSeq
  const p = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(state.offset) })
  setFilters(p, 'folderId')
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

/**
 * The start of a note's summary as one plain line for its row (two lines at most on screen, cut by CSS):
 * the Markdown marks of headings, lists and emphasis dropped, the whitespace folded.
 */
function previewOf(summary) {
  if (typeof summary !== 'string') return ''
  return summary
    .replace(/^\s{0,3}(#{1,6}\s+|[-*+]\s+(\[[ x]\]\s+)?|\d+[.)]\s+|>\s?)/gm, '')
    .replace(/(\*\*|__|`)/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 400)
}

function renderNotes(page, lengths) {
  const ul = $('notes')
  ul.setAttribute('aria-busy', 'false')
  const items = page.data.map(n => {
    const meta = el('p', { class: 'meta' },
      el('span', { text: typeText(n.type) }),
      lengths[n.id] !== undefined ? el('span', { text: duration(lengths[n.id]), title: 'length of the recording' }) : null,
      when(n.dateCreated),
      n.folderId ? el('span', { class: 'in-folder', text: folderName(n.folderId) }) : null)
    const li = el('li', { class: 'note', 'data-note-id': n.id },
      el('div', { class: 'note-line' },
        el('a', { href: `/notes/${encodeURIComponent(n.id)}`, class: 'note-title', text: n.title || 'Untitled' }),
        n.isPinned ? el('span', { class: 'pin', text: 'Pinned' }) : null,
        badge(n.status, stageText(n))),
      meta,
      rowTags(n.tags, state.tags.map(t => t.toLowerCase()), name => filterByTag(name, true)))
    if (typeof n.snippet === 'string' && n.snippet) li.append(el('p', { class: 'snippet' }, highlighted(n.snippet)))
    else if (n.status === 'Done' && previewOf(n.summary)) li.append(el('p', { class: 'preview', text: previewOf(n.summary) }))
    return li
  })
  ul.replaceChildren(...items)
  // notes still waiting for their file change only when a client completes them: not polled
  for (const n of page.data) if (n.status === 'Summarizing' && n.processingStage !== 'awaiting_upload' && !following.has(n.id)) watchRow(n.id, state.loadSeq)
  const from = state.offset + 1
  const to = state.offset + page.data.length
  const filtered = state.q || state.folderId || state.status || state.type || state.tags.length
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
    await pause(POLL_MS * 2)
    if (seq !== state.loadSeq || following.has(id)) return
    let s
    try { s = await noteStatus(id) } catch { return }
    if (!showRowStatus(id, s) || s.status !== 'Summarizing') return
  }
}

/** Shows a note's status on its row of the list, if it is listed; false when it is not. */
export function showRowStatus(id, s) {
  const row = document.querySelector(`li.note[data-note-id="${CSS.escape(id)}"] .badge`)
  if (!row) return false
  showStatus(row, s)
  return true
}

export function initLibrary() {
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
    refreshFolders().then(loadNotes, err => { $('list-status').textContent = explain(err) })
  })
  $('new-folder').addEventListener('submit', async e => {
    e.preventDefault()
    const form = e.target
    try {
      await api('POST', '/v1/folders', { name: $('new-folder-name').value.trim(), color: $('new-folder-color').value })
      form.reset()
      form.closest('details').open = false
      await refreshFolders()
    } catch (err) { alert(explain(err)) }
  })
  refreshFolders().then(loadNotes, err => { $('list-status').textContent = explain(err) })
}
