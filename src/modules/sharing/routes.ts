import { Elysia } from 'elysia'
import { BodyTooLargeError } from '../../http/body-limit'
import { readForm } from '../../http/form-body'
import { clientAddress } from '../../http/client-address'
import { attachment } from '../../http/download'
import { ApiError } from '../../http/errors'
import { assetResponse } from '../../http/html'
import { originOf } from '../audit/by'
import { exportTranscript } from '../notes/transcript-export'
import type { UploadsService } from '../uploads/service'
import { byteRange, mediaType } from '../web/library'
import { NOT_FOUND_PAGE, passphrasePage, SHARE_ASSETS, SHARE_HEADERS, sharedNotePage } from './page'
import { SHARE_PATH, type SharedNote, type SharingService } from './service'
import type { NoteShareRow } from './repo'
import type { ShareFormat } from './model'

const html = (body: string, status = 200, extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...SHARE_HEADERS, 'content-type': 'text/html; charset=utf-8', ...extra } })

/** The one answer of every link that does not open, whatever the reason (page.ts NOT_FOUND_PAGE). */
const notFound = () => html(NOT_FOUND_PAGE, 404)

/** share pages kept in memory at most (the oldest made goes first) */
const MAX_PAGES_KEPT = 500

const DOWNLOAD = /^transcript\.(txt|srt|vtt)$/

type PeerServer = Parameters<typeof clientAddress>[0]

/**
 * A share link's page, its recording and its downloads, with no sign-in: `/s/:token` (GET the page,
 * POST its passphrase), `/s/:token/media` (byte ranges), `/s/:token/transcript.{txt,srt,vtt}`.
 * The access log names only the route template, never the token (http/access-log.ts; error logs
 * redact it: http/logged-path.ts).
 */
export function sharingRoutes(deps: { sharing: SharingService; uploads: Pick<UploadsService, 'media' | 'readMedia'> }) {
  const { sharing, uploads } = deps

  /** The link's row and what it shows when `token` opens now for this request (its passphrase proven), else null. */
  async function opened(token: string, proof: unknown): Promise<{ row: NoteShareRow; note: SharedNote } | null> {
    const row = await sharing.live(token)
    if (!row || !(await sharing.admitted(row, typeof proof === 'string' ? proof : null))) return null
    const note = await sharing.sharedNote(row)
    return note ? { row, note } : null
  }

  /** The recording the link plays, read whole (size, key), or null (not chosen, removed, none uploaded). */
  async function recording(note: SharedNote) {
    if (!note.recording) return null
    try {
      return await uploads.media(note.library, note.share.noteId)
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return null
      throw err
    }
  }

  // pages made, by link and proof, each good for the note's revision it was made at: a view of an
  // unchanged note reads the link and the revision, not the whole note (bench/share-page.ts)
  const pages = new Map<string, { revision: number; body: string }>()

  async function page(token: string, proof: unknown, request: Request, server: PeerServer): Promise<Response> {
    const row = await sharing.live(token)
    if (!row) return notFound()
    const given = typeof proof === 'string' ? proof : null
    if (!(await sharing.admitted(row, given))) return html(passphrasePage({ action: `${SHARE_PATH}/${token}` }), 401)
    // read before the note: a change between the two is kept under the older revision, and misses
    const revision = await sharing.noteRevision(row)
    if (revision === null) return notFound()
    const key = `${row.id} ${given ?? ''}`
    let body = pages.get(key)?.revision === revision ? pages.get(key)!.body : undefined
    if (body === undefined) {
      const note = await sharing.sharedNote(row)
      if (!note) return notFound()
      body = sharedNotePage(note, { base: `${SHARE_PATH}/${token}`, proof: given, media: note.recording ? { contentType: mediaType(note.recording) } : null })
      pages.delete(key)
      pages.set(key, { revision, body })
      if (pages.size > MAX_PAGES_KEPT) pages.delete(pages.keys().next().value!)
    }
    await sharing.opened(row, originOf(server, request))
    return html(body)
  }

  async function passphrase(token: string, request: Request, server: PeerServer): Promise<Response> {
    const row = await sharing.live(token)
    if (!row) return notFound()
    const action = `${SHARE_PATH}/${token}`
    // a link without a passphrase has nothing to try: back to its page, nothing counted
    if (row.passphrase_hash === null) return new Response(null, { status: 303, headers: { ...SHARE_HEADERS, location: action } })
    let given = ''
    try {
      given = (await readForm(request, { limit: 16 * 1024 })).get('passphrase') ?? ''
    } catch (err) {
      // a form too large or unreadable is a wrong passphrase, answered by this page like any other
      if (!(err instanceof ApiError) && !(err instanceof BodyTooLargeError)) throw err
    }
    const r = await sharing.tryPassphrase(row, given, clientAddress(server, request))
    if (r === 'wrong') return html(passphrasePage({ action, error: 'That passphrase is not right. Check it with whoever sent the link and try again.' }), 401)
    if ('retryAfterSeconds' in r) {
      const minutes = Math.ceil(r.retryAfterSeconds / 60)
      return html(passphrasePage({ action, error: `Too many wrong passphrases. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }), 429, { 'retry-after': String(r.retryAfterSeconds) })
    }
    return new Response(null, { status: 303, headers: { ...SHARE_HEADERS, location: `${action}?k=${encodeURIComponent(r.proof)}` } })
  }

  async function media(token: string, proof: unknown, request: Request): Promise<Response> {
    const o = await opened(token, proof)
    const stored = o ? await recording(o.note) : null
    if (!stored) return notFound()
    const range = byteRange(request.headers.get('range'), stored.size)
    const headers: Record<string, string> = { ...SHARE_HEADERS, 'content-type': mediaType(stored.contentType), 'accept-ranges': 'bytes', 'cache-control': 'private, no-cache' }
    if (range === 'bad') return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${stored.size}` } })
    const body = await uploads.readMedia(stored.key, range ?? undefined)
    if (!range) return new Response(body, { headers: { ...headers, 'content-length': String(stored.size) } })
    return new Response(body, { status: 206, headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${stored.size}`, 'content-length': String(range.end - range.start + 1) } })
  }

  async function download(token: string, format: ShareFormat, proof: unknown): Promise<Response> {
    const o = await opened(token, proof)
    if (!o || !o.note.share.formats.includes(format)) return notFound()
    const n = o.note
    let file
    try {
      file = exportTranscript({ noteId: n.share.noteId, title: n.title, type: '', language: null, transcript: n.transcript }, format)
    } catch (err) {
      // a note without times has no .srt or .vtt
      if (err instanceof ApiError && err.code === 'conflict') return notFound()
      throw err
    }
    return new Response(file.body as string, { headers: { ...SHARE_HEADERS, 'content-type': file.contentType, 'content-disposition': attachment(n.title, file.extension, n.share.noteId) } })
  }

  const asset = (a: (typeof SHARE_ASSETS)[keyof typeof SHARE_ASSETS]) => ({ query }: { query: Record<string, string | undefined> }) => assetResponse(a.body, a.type, query.v === a.v)

  return new Elysia({ name: 'notesvc-sharing' })
    .get(SHARE_ASSETS.style.path, asset(SHARE_ASSETS.style))
    .get(SHARE_ASSETS.script.path, asset(SHARE_ASSETS.script))
    .get(`${SHARE_PATH}/:token`, ({ params, query, request, server }) => page(params.token, query.k, request, server))
    .post(`${SHARE_PATH}/:token`, ({ params, request, server }) => passphrase(params.token, request, server), { parse: 'none' })
    .get(`${SHARE_PATH}/:token/:file`, ({ params, query, request }) => {
      if (params.file === 'media') return media(params.token, query.k, request)
      const m = DOWNLOAD.exec(params.file)
      return m ? download(params.token, m[1] as ShareFormat, query.k) : notFound()
    })
    // anything else under the links' path (another method, a deeper path, no token) is the same 404
    // page with the same headers, never the API's JSON error that would repeat the path
    .all(`${SHARE_PATH}`, notFound)
    .all(`${SHARE_PATH}/*`, notFound)
}
