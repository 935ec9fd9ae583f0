// Calls to the /v1 API as the signed-in user, as every client makes them (docs/decisions.md "The web
// library"): the session cookie plus the page's CSRF token in X-CSRF-Token, X-Notesvc-Library to
// pick the live or the sandbox library and X-Notesvc-Workspace the workspace. Also the header's balance, which charged calls update.
import { $ } from './dom.js'

const CSRF = document.querySelector('meta[name="csrf-token"]').content
/** the workspace the page was drawn in (the header's switcher sets it; the server checked the membership) */
const WORKSPACE = (document.querySelector('meta[name="notesvc-workspace"]') || {}).content || ''
export const workspaceId = () => WORKSPACE
/** whether the person's role in the page's workspace may write (viewers may not; the API's 403 is the real gate) */
export const canWrite = () => document.body.dataset.role !== 'viewer'
const LIBRARY_KEY = 'notesvc.library'

/** the library the pages work in, `live` or `sandbox`, kept across pages; changed only by setLibrary */
export let library = localStorage.getItem(LIBRARY_KEY) === 'sandbox' ? 'sandbox' : 'live'

export function setLibrary(next) {
  library = next
  localStorage.setItem(LIBRARY_KEY, next)
  document.body.classList.toggle('sandbox', next === 'sandbox')
  const banner = $('sandbox-banner')
  if (banner) banner.hidden = next !== 'sandbox'
}

/** The page's CSRF token (the live stream sends it as a subprotocol: record-stream.js). */
export const csrfToken = () => CSRF

/** The session's headers, for the requests that do not go through `api` (recording lengths, exports). */
export const sessionHeaders = () => ({ 'x-csrf-token': CSRF, 'x-notesvc-library': library, ...(WORKSPACE ? { 'x-notesvc-workspace': WORKSPACE } : {}) })

export class ApiFailure extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {}
    super(e.message || `The server answered ${status}.`)
    this.status = status
    this.code = e.code || ''
    this.retryAfter = e.retry_after_seconds || 0
  }
}

/** A call to the API as the signed-in user; the parsed body, or an ApiFailure with the server's message. */
export async function api(method, path, body) {
  return (await apiCall(method, path, body)).body
}

/**
 * The same, with more headers (`If-Match`) and the answer's `ETag` (the transcript's version, `"3"`),
 * also on a failure (a 412 carries the current one): `{ body, etag }`.
 */
export async function apiCall(method, path, body, more = {}) {
  const headers = { ...sessionHeaders(), accept: 'application/json', ...more }
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' })
  } catch {
    throw new ApiFailure(0, { error: { message: 'The server could not be reached. Check that it is running and try again.' } })
  }
  const remaining = res.headers.get('x-credits-remaining')
  if (remaining !== null) showBalance(Number(remaining))
  const etag = res.headers.get('etag')
  if (res.status === 204) return { body: null, etag }
  const text = await res.text()
  let parsed = null
  try { parsed = text ? JSON.parse(text) : null } catch { parsed = null }
  if (!res.ok) {
    if (res.status === 401) window.location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`)
    const failure = new ApiFailure(res.status, parsed)
    failure.etag = etag
    throw failure
  }
  return { body: parsed, etag }
}

/** The version an ETag names (`"3"` → 3), or null. */
export const versionOf = etag => (etag && /^(W\/)?"?(\d+)"?$/.test(etag) ? Number(/(\d+)/.exec(etag)[1]) : null)

/** What went wrong, in words, with what to do. */
export function explain(err) {
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
export async function refreshBalance() {
  try { showBalance((await api('GET', '/v1/usage?limit=1')).balance.totalRemaining) } catch { /* the header keeps the last figure */ }
}
