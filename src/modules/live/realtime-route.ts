/**
 * GET /v1/realtime: OpenAI's realtime transcription protocol on Bun.serve's own WebSockets
 * (docs/realtime.md). Everything that can refuse a stream is decided before the upgrade, as an HTTP
 * answer in the error envelope: the key (401, from `Authorization: Bearer` or the
 * `openai-insecure-api-key.<KEY>` subprotocol), its scope (transcriptions:write, as the SPEC's
 * transcription; 403) and rate (processing; 429), the query (`intent=transcription`; 400), and the
 * stream limits (503 with Retry-After). Past the upgrade every fault is the protocol's `error` event.
 *
 * Bun.serve's WebSocket support rather than Elysia's `.ws()`: the app is served by http/listen.ts's own
 * Bun.serve (Elysia's listen is not used), and the upgrade needs the answered subprotocol and the
 * refusals above on the upgrade request itself, which Bun's `server.upgrade` gives directly.
 */
import type { Server, ServerWebSocket, WebSocketHandler } from 'bun'
import type { Admission, AdmissionTerms, Principal } from '../../http/admission'
import { bearerToken } from '../../http/auth'
import { ApiError, errorEnvelope, knownApiError } from '../../http/errors'
import type { BrowserStreamCredential } from './browser-credential'
import { MAX_FRAME_BYTES } from './protocol'
import type { LiveRecognizerFactory } from './recognizer'
import { createRealtimeSession } from './realtime-session'
import { createStreamCounter, type StreamLimits } from './stream-limits'
import { StreamRefusal, type LiveStream, type StreamsService } from './streams'
import type { LiveStreamEvents } from './stream-hold'
import { sandboxRecognizers } from './sandbox-recognizer'
import { DEFAULT_SESSION } from './session-config'
import { STYLE_IDS } from '../../engines/llm/engine'

const REALTIME_PATH = '/v1/realtime'
const KEY_PROTOCOL = 'openai-insecure-api-key.'

/**
 * Frames up to OpenAI's own 15 MiB reach the protocol layer, which answers those over MAX_FRAME_BYTES
 * with its `frame_too_large` error; a larger one Bun closes the socket on (1009, message too big).
 */
const MAX_SOCKET_FRAME_BYTES = 16 * 1024 * 1024

/** The terms of a stream: what the SPEC asks of a transcription (createTranscription). */
/** a stream makes a note and spends the workspace's credits: an editor's (as createTranscription) */
const STREAM_TERMS: AdmissionTerms = { id: 'realtime', scopes: ['transcriptions:write'], rateClass: 'processing', role: 'editor' }

/** How long a refused stream is told to wait before trying again. */
const RETRY_AFTER_SECONDS = 5

interface SocketData {
  release: () => void
  stream: LiveStream
  sandbox: boolean
  /** the stream's events until the session exists (the stream is opened before the upgrade) */
  relay: { kept: (s: number) => void; lost: LiveStreamEvents['lost'] }
  session?: ReturnType<typeof createRealtimeSession>
  idle?: ReturnType<typeof setTimeout>
  /** closed by the server for idleness: the stream stays resumable */
  idled?: boolean
}

export interface RealtimeOptions {
  admission: Admission
  docsUrl: string
  recognizers: LiveRecognizerFactory
  streams: StreamsService
  publicUrl: string
  limits: StreamLimits & { idleSeconds: number }
  /** the signed-in web library's session, when no key is sent (browser-credential.ts) */
  browserSession?: BrowserStreamCredential
}

function offeredProtocols(request: Request): string[] {
  return (request.headers.get('sec-websocket-protocol') ?? '').split(',').map(p => p.trim()).filter(Boolean)
}

/** The key: `Authorization: Bearer` (openai/realtime/ws), else the subprotocol (openai/realtime/websocket: browsers, Bun). */
function streamCredential(request: Request, protocols: string[]): string | undefined {
  const bearer = bearerToken(request.headers.get('authorization') ?? undefined)
  if (bearer) return bearer
  const offered = protocols.find(p => p.startsWith(KEY_PROTOCOL))
  return offered && offered.length > KEY_PROTOCOL.length ? offered.slice(KEY_PROTOCOL.length) : undefined
}

function refusedQuery(url: URL): ApiError | null {
  const intent = url.searchParams.get('intent')
  if (intent === 'transcription') return null
  const what = intent !== null ? `intent=${intent}` : url.searchParams.has('model') ? 'a conversation session (?model=)' : 'no intent'
  return new ApiError('invalid_request', `notesvc serves realtime transcription sessions only, and this connection asked for ${what}; connect to ${REALTIME_PATH}?intent=transcription (openai: { intent: 'transcription' }).`)
}

const MAX_TITLE_CHARS = 200

/** notesvc's own query options: the stream to resume, and the note's title, summary style and language */
function streamQuery(url: URL): { resume: string | null; title?: string; styleId?: string; language?: string | null } | ApiError {
  const q = url.searchParams
  const styleId = q.get('style') ?? undefined
  if (styleId !== undefined && !(STYLE_IDS as readonly string[]).includes(styleId)) {
    return new ApiError('invalid_request', `style=${styleId.slice(0, 40)} is not a summary style; use one of ${STYLE_IDS.join(', ')} (GET /v1/styles lists them).`, { details: [{ field: 'style', issue: 'unknown style' }] })
  }
  const title = q.get('title') ?? undefined
  if (title !== undefined && (title.length > MAX_TITLE_CHARS || /[\u0000-\u001f]/.test(title))) {
    return new ApiError('invalid_request', `title= must be at most ${MAX_TITLE_CHARS} characters without control characters.`, { details: [{ field: 'title', issue: 'too long or has control characters' }] })
  }
  const language = q.get('language')
  return { resume: q.get('resume'), title, styleId, language: language && language !== 'auto' ? language.slice(0, 16) : null }
}

export function createRealtimeRoute(opts: RealtimeOptions) {
  const streams = createStreamCounter(opts.limits)
  const sandbox = sandboxRecognizers()
  const newId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`

  function answer(err: ApiError): Response {
    const requestId = newId('req')
    const headers = new Headers({ 'content-type': 'application/json', 'x-request-id': requestId, ...err.options.headers })
    return new Response(JSON.stringify(errorEnvelope(err, opts.docsUrl, requestId)), { status: err.status, headers })
  }

  async function admit(request: Request, protocols: string[]): Promise<Principal> {
    const credential = streamCredential(request, protocols)
    const browser = credential === undefined ? await opts.browserSession?.(request, protocols) : null
    if (browser) return (await opts.admission.authorize(browser, STREAM_TERMS)).principal!
    const admitted = await opts.admission.admit({ credential, address: () => '' }, STREAM_TERMS)
    return admitted.principal!
  }

  /** The answer to a request for the path: an envelope when refused, undefined once upgraded. */
  async function handle(request: Request, server: Server<unknown>): Promise<Response | undefined> {
    const protocols = offeredProtocols(request)
    let principal: Principal
    try {
      principal = await admit(request, protocols)
    } catch (err) {
      const known = knownApiError(err)
      if (known) return answer(known)
      throw err
    }
    const badQuery = refusedQuery(new URL(request.url))
    if (badQuery) return answer(badQuery)
    if (request.method !== 'GET' || request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
      return answer(new ApiError('invalid_request', `${REALTIME_PATH} is a WebSocket: send GET with \`Upgrade: websocket\` (OpenAI's realtime client does).`))
    }
    const place = streams.take(principal.accountId)
    if (!place.ok) {
      const whose = place.scope === 'account' ? 'this account has' : 'this server has'
      return answer(new ApiError('service_unavailable', `${whose} ${place.limit} live stream${place.limit === 1 ? '' : 's'} running, its limit; end one, or retry after ${RETRY_AFTER_SECONDS} seconds.`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
      }))
    }
    const query = streamQuery(new URL(request.url))
    if (query instanceof ApiError) {
      place.release()
      return answer(query)
    }
    const relay: SocketData['relay'] = { kept: () => {}, lost: () => {} }
    const events: LiveStreamEvents = { kept: s => relay.kept(s), lost: (why, m) => relay.lost(why, m) }
    let stream: LiveStream
    try {
      stream = query.resume
        ? await opts.streams.resume(principal, query.resume, events)
        : await opts.streams.open(principal, { sampleRate: DEFAULT_SESSION.sampleRate, title: query.title, styleId: query.styleId, language: query.language }, events)
    } catch (err) {
      place.release()
      if (err instanceof StreamRefusal) return answer(refusalError(err))
      throw err
    }
    const headers = protocols.includes('realtime') ? { 'Sec-WebSocket-Protocol': 'realtime' } : undefined
    const upgraded = (server as Server<SocketData>).upgrade(request, { headers, data: { release: place.release, stream, relay, sandbox: principal.sandbox } })
    if (upgraded) return undefined
    place.release()
    await stream.detach()
    return answer(new ApiError('invalid_request', 'The WebSocket handshake was not valid (Sec-WebSocket-Key, Sec-WebSocket-Version 13); connect with a WebSocket client.'))
  }

  function refusalError(err: StreamRefusal): ApiError {
    if (err.code === 'too_many_streams') {
      return new ApiError('service_unavailable', `${err.message} Retry after ${RETRY_AFTER_SECONDS} seconds.`, { retryAfterSeconds: RETRY_AFTER_SECONDS, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } })
    }
    return new ApiError(err.code === 'stream_not_found' ? 'not_found' : 'conflict', err.message)
  }

  function touch(ws: ServerWebSocket<SocketData>) {
    clearTimeout(ws.data.idle)
    // a stream that is finishing (its last turns decoded, its note made) waits for nothing from the client
    if (ws.data.session?.ending()) return
    ws.data.idle = setTimeout(() => {
      if (ws.data.session?.ending()) return
      ws.send(JSON.stringify({ type: 'error', event_id: newId('event'), error: { type: 'invalid_request_error', code: 'idle_timeout', message: `No event came for ${opts.limits.idleSeconds} seconds; the stream is closed. Connect again to go on.`, param: null, event_id: null } }))
      ws.data.idled = true
      ws.close(1000, 'idle timeout')
    }, opts.limits.idleSeconds * 1000)
  }

  const websocket: WebSocketHandler<SocketData> = {
    maxPayloadLength: Math.max(MAX_SOCKET_FRAME_BYTES, MAX_FRAME_BYTES),
    open(ws) {
      const session = (ws.data.session = createRealtimeSession({
        sessionId: newId('sess'),
        nextId: newId,
        recognizers: ws.data.sandbox ? sandbox : opts.recognizers,
        stream: ws.data.stream,
        publicUrl: opts.publicUrl,
        io: { send: event => void ws.send(JSON.stringify(event)), close: (code, reason) => ws.close(code, reason) },
      }))
      ws.data.relay.kept = session.kept
      ws.data.relay.lost = session.lost
      session.open()
      touch(ws)
    },
    message(ws, frame) {
      ws.data.session?.message(frame)
      touch(ws)
    },
    async close(ws, code) {
      clearTimeout(ws.data.idle)
      ws.data.release()
      // a normal close by the client ends the stream; a drop (1006, 1001…) or the idle timeout leaves it resumable
      await ws.data.session?.closed(code === 1000 && !ws.data.idled)
    },
  }

  return { path: REALTIME_PATH, handle, websocket, running: streams.running }
}

