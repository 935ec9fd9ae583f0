import { Elysia } from 'elysia'
import type { SessionCredential } from '../../http/auth'
import { ApiError } from '../../http/errors'
import type { UploadsService } from '../uploads/service'
import type { UsageService } from '../usage/service'
import { libraryShell, type ShellView } from './library-pages'
import { sha256 } from '../../crypto/digest'
import { isRole } from '../workspaces/model'
import { currentWorkspace, INVITATION_PATH, WORKSPACE_PAGE_PATH, type WorkspaceDirectory } from './workspace-choice'
import { invitationMain, workspaceMain } from './workspace-pages'
import type { AuditService } from '../audit/service'
import { userBy } from '../audit/by'
import { SIGN_IN_PATH, type SessionService } from './sessions'
import { assetResponse } from '../../http/html'
import { pageHeaders } from '../../http/security-headers'
// The library's script modules and style are embedded in the binary: the pages load nothing from elsewhere.
import add from './assets/library/add.js' with { type: 'text' }
import ask from './assets/library/ask.js' with { type: 'text' }
import api from './assets/library/api.js' with { type: 'text' }
import dom from './assets/library/dom.js' with { type: 'text' }
import downloads from './assets/library/downloads.js' with { type: 'text' }
import findreplace from './assets/library/findreplace.js' with { type: 'text' }
import folders from './assets/library/folders.js' with { type: 'text' }
import history from './assets/library/history.js' with { type: 'text' }
import list from './assets/library/list.js' with { type: 'text' }
import main from './assets/library/main.js' with { type: 'text' }
import note from './assets/library/note.js' with { type: 'text' }
import pcm from './assets/library/pcm.js' with { type: 'text' }
import record from './assets/library/record.js' with { type: 'text' }
import recordAudio from './assets/library/record-audio.js' with { type: 'text' }
import recordStream from './assets/library/record-stream.js' with { type: 'text' }
import recordWorklet from './assets/library/record-worklet.js' with { type: 'text' }
import noteState from './assets/library/note-state.js' with { type: 'text' }
import resummarize from './assets/library/resummarize.js' with { type: 'text' }
import share from './assets/library/share.js' with { type: 'text' }
import speakers from './assets/library/speakers.js' with { type: 'text' }
import status from './assets/library/status.js' with { type: 'text' }
import suggestions from './assets/library/suggestions.js' with { type: 'text' }
import summary from './assets/library/summary.js' with { type: 'text' }
import tags from './assets/library/tags.js' with { type: 'text' }
import transcript from './assets/library/transcript.js' with { type: 'text' }
import workspace from './assets/library/workspace.js' with { type: 'text' }
import style from './assets/library.css' with { type: 'text' }

const version = (text: string) => Bun.hash(text).toString(36)
/** The script's modules by path; they import one another by relative URL (`./api.js`). */
const MODULES: Record<string, string> = {
  '/library/add.js': add, '/library/api.js': api, '/library/dom.js': dom, '/library/folders.js': folders, '/library/list.js': list,
  '/library/main.js': main, '/library/note.js': note, '/library/speakers.js': speakers, '/library/status.js': status, '/library/summary.js': summary,
  '/library/downloads.js': downloads, '/library/findreplace.js': findreplace, '/library/suggestions.js': suggestions, '/library/history.js': history, '/library/note-state.js': noteState, '/library/resummarize.js': resummarize, '/library/share.js': share, '/library/transcript.js': transcript, '/library/tags.js': tags,
  '/library/ask.js': ask, '/library/pcm.js': pcm, '/library/record.js': record, '/library/record-audio.js': recordAudio, '/library/record-stream.js': recordStream, '/library/record-worklet.js': recordWorklet,
  '/library/workspace.js': workspace,
}
const SCRIPT_VERSION = version(Object.entries(MODULES).map(([name, text]) => `${name}\n${text}`).join('\0'))

const bundles = new Map<string, Promise<string>>()
/**
 * The page's one script: the modules bundled into one file by Bun's bundler, from memory, on first
 * use (a few milliseconds, once per process). The browser gets one request, as before the script was
 * split; the source stays in modules that say what each part of the page does. The record button's
 * AudioWorklet is a bundle of its own (a worklet module is loaded by URL into its own scope).
 */
function bundle(entry: string): Promise<string> {
  let built = bundles.get(entry)
  if (!built) {
    built = Bun.build({ entrypoints: [entry], files: MODULES, target: 'browser', format: 'esm' }).then(async out => {
      if (!out.success || out.outputs.length !== 1) throw new AggregateError(out.logs, 'the web library\'s script modules could not be bundled')
      return out.outputs[0]!.text()
    })
    bundles.set(entry, built)
  }
  return built
}

const ASSETS = {
  script: { path: '/assets/library.js', body: () => bundle('/library/main.js'), type: 'text/javascript; charset=utf-8', v: SCRIPT_VERSION },
  worklet: { path: '/assets/record-worklet.js', body: () => bundle('/library/record-worklet.js'), type: 'text/javascript; charset=utf-8', v: SCRIPT_VERSION },
  style: { path: '/assets/library.css', body: async () => style, type: 'text/css; charset=utf-8', v: version(style) },
}
const MAX_IDS = 100
/** a page's own main part (the workspace and invitation pages), with its status */
type MainPart = string | { html: string; status: number }

/**
 * The pages' Content-Security-Policy: scripts and styles only from this server's files (no inline
 * script or style element), media and API calls to this server, uploads also to the storage's origin
 * (the service itself on disk storage; the bucket with S3).
 */
function contentSecurityPolicy(uploadOrigins: string[]): string {
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "media-src 'self'",
    `connect-src 'self' ${uploadOrigins.join(' ')}`.trim(), "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
  ].join('; ')
}

/** Parses `Range: bytes=a-b` (one range) against a size: the inclusive byte range, null for none, 'bad' when unsatisfiable. */
export function byteRange(header: string | null, size: number): { start: number; end: number } | null | 'bad' {
  if (!header) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m || (m[1] === '' && m[2] === '')) return 'bad'
  let start: number
  let end: number
  if (m[1] === '') {
    const suffix = Number(m[2])
    if (suffix === 0) return 'bad'
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(m[1])
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  }
  if (start >= size || end < start) return 'bad'
  return { start, end }
}

export interface LibraryRouteDeps {
  sessions: SessionService
  session: SessionCredential
  uploads: UploadsService
  usage: UsageService
  /** origins besides this one that the browser PUTs uploads to (an S3 endpoint) */
  uploadOrigins: string[]
  /** the audit log: a recording played is recorded */
  audit: Pick<AuditService, 'recordBy'>
  /** the server streams live transcription (GET /v1/realtime): the library shows the record button */
  liveStreams: boolean
  /** share links are on (NOTESVC_SHARING): the note page shows its Share… control */
  sharing?: boolean
  /** the person's workspaces and roles (the header's switcher, the page's workspace), invitations by token */
  workspaces: Pick<WorkspaceDirectory, 'membershipsOf' | 'invitationByToken' | 'findWorkspace'>
}

/** The web library: `/`, `/notes/:id`, their script and style, a note's recording, and recording lengths. */
export function libraryRoutes(deps: LibraryRouteDeps) {
  const { sessions, uploads, usage } = deps
  const csp = contentSecurityPolicy(deps.uploadOrigins)

  const toSignIn = (next: string) => new Response(null, { status: 303, headers: { location: `${SIGN_IN_PATH}?next=${encodeURIComponent(next)}`, 'cache-control': 'no-store' } })

  /** A page of the shell for a signed-in person, in the workspace the cookie names (./workspace-choice.ts). */
  async function shell(request: Request, view: ShellView, next: string, o: { noteId?: string; main?: (w: Awaited<ReturnType<typeof currentWorkspace>>, user: { email: string; csrf: string }) => Promise<MainPart> | MainPart } = {}): Promise<Response> {
    const user = await sessions.userOf(request)
    if (!user) return toSignIn(next)
    const workspace = await currentWorkspace(deps.workspaces, request, user.accountId)
    const part = o.main ? await o.main(workspace, user) : undefined
    const main = typeof part === 'object' ? part.html : part
    const balance = (await usage.usage(workspace.current.id, 1)).balance.totalRemaining
    const body = libraryShell({
      view, user, balance, noteId: o.noteId, workspace, main,
      assets: { script: `${ASSETS.script.path}?v=${ASSETS.script.v}`, style: `${ASSETS.style.path}?v=${ASSETS.style.v}` },
      // in a team too: the stream names the page's workspace as a subprotocol (live/browser-credential.ts)
      live: deps.liveStreams ? { worklet: `${ASSETS.worklet.path}?v=${ASSETS.worklet.v}` } : undefined,
      sharing: deps.sharing,
    })
    return new Response(body, { status: typeof part === 'object' ? part.status : 200, headers: pageHeaders(csp) })
  }

  /** An invitation's page: who invites to what as what, or why it cannot be used any more (404). */
  async function invitation(token: string, user: { email: string; csrf: string }): Promise<MainPart> {
    const invalid = { status: 404, html: `<main id="main" class="invitation-page narrow" tabindex="-1"><h1>Invitation not valid</h1>
<p id="invitation-invalid" class="error" role="alert">This invitation link has expired, was revoked or was used already. Ask an admin of the workspace for a new invitation.</p><p><a href="/">Back to your library</a></p></main>` }
    const row = /^[A-Za-z0-9_-]{16,200}$/.test(token) ? await deps.workspaces.invitationByToken(sha256(token)) : null
    if (!row || row.accepted_at || row.revoked_at || row.expires_at <= new Date().toISOString() || !isRole(row.role)) return invalid
    const team = await deps.workspaces.findWorkspace(row.workspace_id)
    if (!team || team.kind !== 'team') return invalid
    return invitationMain({ token, workspaceId: team.id, workspaceName: team.name ?? team.id, role: row.role, email: row.email }, user)
  }

  const asset = (a: (typeof ASSETS)[keyof typeof ASSETS]) => async ({ query }: { query: Record<string, string | undefined> }) =>
    assetResponse(await a.body(), a.type, query.v === a.v)

  return new Elysia({ name: 'notesvc-library' })
    .get('/', ({ request }) => shell(request, 'library', '/'))
    .get('/notes/:id', ({ request, params }) => shell(request, 'note', `/notes/${params.id}`, { noteId: params.id }))
    .get(WORKSPACE_PAGE_PATH, ({ request }) => shell(request, 'workspace', WORKSPACE_PAGE_PATH, { main: w => workspaceMain(w.current) }))
    .get(`${INVITATION_PATH}/:token`, ({ request, params }) => shell(request, 'invitation', `${INVITATION_PATH}/${params.token}`, { main: (_w, user) => invitation(params.token, user) }))
    .get(ASSETS.script.path, asset(ASSETS.script))
    .get(ASSETS.style.path, asset(ASSETS.style))
    .get(ASSETS.worklet.path, asset(ASSETS.worklet))
    // browsers ask every page's site for one; no icon, and no 404 in their consoles
    .get('/favicon.ico', () => new Response(null, { status: 204, headers: { 'cache-control': 'public, max-age=86400' } }))

    // A note's recording for the player: the session cookie (a read, and the cookie is SameSite=Lax,
    // so other sites cannot have it sent), byte ranges so the player can seek.
    .get('/notes/:id/media', async ({ request, params, query, server }) => {
      const user = await sessions.userOf(request)
      if (!user) throw new ApiError('invalid_token', `Sign in at ${SIGN_IN_PATH} to play recordings.`)
      // the page's workspace (its query), else the cookie's; one the person is not a member of is refused
      const w = await currentWorkspace(deps.workspaces, request, user.accountId, typeof query.workspace === 'string' ? query.workspace : null)
      if (w.asked) throw new ApiError('insufficient_scope', `You are not a member of the workspace this page names. Pick one of your workspaces in the library's workspace menu.`)
      const media = await uploads.media({ accountId: w.current.id, sandbox: query.library === 'sandbox' }, params.id)
      const range = byteRange(request.headers.get('range'), media.size)
      const headers: Record<string, string> = {
        'content-type': mediaType(media.contentType), 'accept-ranges': 'bytes', 'cache-control': 'private, no-cache', 'x-content-type-options': 'nosniff',
      }
      if (range === 'bad') return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${media.size}` } })
      // One event per playing, not per range a player asks for while seeking: the read from the start.
      if (!range || range.start === 0) {
        await deps.audit.recordBy(userBy(user.accountId, server, request), {
          accountId: w.current.id, action: 'note.media_read', target: { type: 'note', id: params.id }, details: { sandbox: query.library === 'sandbox' },
        })
      }
      const body = await uploads.readMedia(media.key, range ?? undefined)
      if (!range) return new Response(body, { headers: { ...headers, 'content-length': String(media.size) } })
      return new Response(body, { status: 206, headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${media.size}`, 'content-length': String(range.end - range.start + 1) } })
    })

    // The recording lengths of a page of notes (the list does not carry them): the session as an API
    // credential, so the CSRF header and the library header apply as on /v1.
    .get('/web/durations', async ({ request, query }) => {
      const p = await deps.session(request)
      if (!p) throw new ApiError('invalid_token', `Send the page's security token in X-CSRF-Token, or sign in at ${SIGN_IN_PATH}.`)
      const ids = String(query.ids ?? '').split(',').filter(Boolean)
      if (ids.length > MAX_IDS) throw new ApiError('invalid_request', `Ask for at most ${MAX_IDS} notes at once.`, { details: [{ field: 'ids', issue: `at most ${MAX_IDS}` }] })
      return { durations: await uploads.durations(p, ids) }
    })
}

/**
 * The `type/subtype` of a stored upload's content type, for the player's response: createUpload
 * checks only the part before any `;`, so parameters a client sent are dropped rather than echoed
 * into a header (a value Bun refuses would make the response fail).
 */
export function mediaType(stored: string): string {
  const base = stored.split(';')[0]!.trim().toLowerCase()
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(base) ? base : 'application/octet-stream'
}
