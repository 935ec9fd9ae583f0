import type { Server, WebSocketHandler } from 'bun'
import { requestLabel } from './request-label'
import { escapedErrorAnswer, type EscapedErrorAnswer } from './escaped-error'
import { createLogger } from '../log'

/**
 * The HTTP server of `serve`: Bun.serve around the application's fetch, with one addition.
 *
 * Bun (1.4.5 and before) writes a response in one send() when it is ready within the turn of the
 * event loop that read the request (inside uWS's cork), or when status line, headers and body fit in
 * the 16 KB cork buffer. A larger response that is ready later (after a PostgreSQL query, a file
 * read, a call to a summary engine) is written uncorked: the status line, every header's name, ": ",
 * value and "\r\n", then the body, each its own send(), 23 for a page of notes (oven-sh/bun#41341,
 * open; counted with strace). On loopback each send() is a TCP segment that the kernel delivers inside
 * the call: a cached page of 50 notes (31 KB) on PostgreSQL spent most of the node's CPU in them,
 * 6,300 requests/s against 15,600 sent whole (bench/README.md, list-postgres.ts).
 *
 * A body written through a direct stream goes out corked, headers and body in one send(). So a JSON
 * response of more than 8 KB that is ready only in a later turn is sent that way: the same status,
 * headers and bytes, framed with `Transfer-Encoding: chunked` (one chunk) instead of `Content-Length`,
 * which every HTTP/1.1 client reads alike. Everything else (a response ready in the same turn, a
 * smaller one, other content types such as media and files, which keep their length and ranges,
 * HEAD requests, responses without a body) is sent exactly as the application made it.
 */
/** A counter that moves once per turn of the event loop in which it was read. */
let turn = 0
let scheduled = false
function currentTurn(): number {
  if (!scheduled) {
    scheduled = true
    setImmediate(() => {
      turn++
      scheduled = false
    })
  }
  return turn
}

const NO_BODY = new Set([101, 204, 205, 304])

/** Whether a response made after the request's turn is resent as one write (see above). */
function sentInPieces(request: Request, response: Response): boolean {
  if (request.method === 'HEAD' || NO_BODY.has(response.status) || response.body === null) return false
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json'
}

/** Bodies up to this size leave in one send() whenever they are ready (with their headers, under 16 KB). */
const FITS_THE_CORK_BUFFER = 8 * 1024

/** The same response, its body written in one piece through a direct stream when larger than 8 KB (see above). */
async function inOneWrite(response: Response): Promise<Response> {
  const bytes = new Uint8Array(await response.arrayBuffer())
  if (bytes.byteLength <= FITS_THE_CORK_BUFFER) return new Response(bytes, response)
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  const body = new ReadableStream({
    type: 'direct',
    pull(controller: { write(b: Uint8Array): unknown; close(): unknown }) {
      controller.write(bytes)
      controller.close()
    },
  } as unknown as UnderlyingDefaultSource)
  return new Response(body, { status: response.status, statusText: response.statusText, headers })
}

export interface Fetching {
  fetch(request: Request): Response | Promise<Response>
  server: Server<unknown> | null
  /**
   * An answer made at once, before the application routes the request (the kept first page of
   * notes: modules/notes/kept-page-answer.ts), or undefined: then `fetch`.
   */
  answerAtOnce?: (request: Request) => Response | undefined
  /**
   * Told of every response when it is ready (the metrics, GET /metrics): the request's label
   * (http/request-label.ts; undefined when no route matched), the status, and the seconds since the
   * request was handed to the server's handler. Unset: nothing is timed.
   */
  observe?: (label: string | undefined, status: number, seconds: number) => void
  /**
   * The answer to an error that escaped the application (thrown by `answerAtOnce` or `fetch`, or a
   * rejected promise): the envelope's 500, logged (http/escaped-error.ts). Unset: one that logs to
   * stderr with a relative `doc_url`.
   */
  escaped?: EscapedErrorAnswer
  /**
   * A WebSocket route served on Bun.serve's own WebSockets (GET /v1/realtime, modules/live): requests
   * to its path are handed to `handle`, which answers a refusal or upgrades (then undefined).
   */
  realtime?: {
    path: string
    handle(request: Request, server: Server<unknown>): Promise<Response | undefined>
    websocket: WebSocketHandler<any>
  }
}

export interface ListenOptions {
  port: number
  hostname: string
  maxRequestBodySize?: number
}

/**
 * Serves `app` (an Elysia application) on Bun.serve, with the late JSON responses in one write, and
 * sets `app.server` (Elysia reads the peer's address from it).
 */
export function listen(app: Fetching, options: ListenOptions): Server<unknown> {
  let server: Server<unknown>
  try {
    server = serve(app, options)
  } catch (err) {
    // Bun says "Failed to start server. Is port N in use?"; say what to do about it. (Elysia's listen
    // set reusePort, so a second server on a busy port shared it silently; this one refuses.)
    throw new Error(`cannot listen on ${options.hostname}:${options.port} (${(err as Error).message}): stop the program using that port, or set PORT (and HOST) to a free one`)
  }
  app.server = server
  return server
}

function serve(app: Fetching, options: ListenOptions): Server<unknown> {
  return Bun.serve({
    port: options.port,
    hostname: options.hostname,
    maxRequestBodySize: options.maxRequestBodySize,
    // as Elysia's own listen: connections idle for 30 s are closed
    idleTimeout: 30,
    // Never Bun's development error page (source lines, file paths), whatever NODE_ENV says; and
    // should anything still reach Bun's own handler, the envelope's 500 rather than Bun's.
    development: false,
    // said outright: in production mode Bun (1.4.5) shares a busy port (SO_REUSEPORT) unless told not to
    reusePort: false,
    error: error => escapedAnswerOf(app)(error),
    fetch: withRealtime(app, serverFetch(app)),
    // Bun's types tie a fetch that may answer undefined (upgraded) to a websocket handler, which is
    // here exactly when the WebSocket route is
    ...(app.realtime ? { websocket: app.realtime.websocket } : {}),
  } as Parameters<typeof Bun.serve>[0]) as Server<unknown>
}

/** The application's fetch, with the requests to the WebSocket route's path handed to it first. */
function withRealtime(app: Fetching, fetch: (request: Request) => Response | Promise<Response>) {
  const realtime = app.realtime
  if (!realtime) return fetch
  return (request: Request, server: Server<unknown>): Response | Promise<Response | undefined> => {
    // the path sits after the origin: a cheap test first, the URL parsed only for a likely match
    if (!request.url.includes(realtime.path) || new URL(request.url).pathname !== realtime.path) return fetch(request)
    const t0 = performance.now()
    return realtime.handle(request, server).then(answer => {
      app.observe?.(realtime.path, answer?.status ?? 101, (performance.now() - t0) / 1000)
      return answer
    }, error => failed(app, request, t0, error))
  }
}

let fallbackEscaped: EscapedErrorAnswer | undefined
const escapedAnswerOf = (app: Fetching): EscapedErrorAnswer => app.escaped ?? (fallbackEscaped ??= escapedErrorAnswer({ docsUrl: '/docs', log: createLogger() }))

/** The envelope's 500 for an error that escaped the application, told to `observe` as any answer. */
function failed(app: Fetching, request: Request, t0: number, error: unknown): Response {
  const answer = escapedAnswerOf(app)(error, request, t0)
  app.observe?.(requestLabel(request), answer.status, (performance.now() - t0) / 1000)
  return answer
}

/**
 * The handler Bun.serve calls for each request: the answer made at once when there is one, else the
 * application's (late JSON responses in one write), each told to `app.observe` when ready. This is
 * the one place every answer leaves, so an error that escaped the application (a synchronous throw
 * or a rejected promise of either) is turned here into the envelope's 500 (`app.escaped`), timed and
 * told to `observe` like any other answer.
 */
export function serverFetch(app: Fetching): (request: Request) => Response | Promise<Response> {
  return request => {
    const observe = app.observe
    const t0 = performance.now()
    let atOnce: Response | undefined
    try {
      atOnce = app.answerAtOnce?.(request)
    } catch (error) {
      return failed(app, request, t0, error)
    }
    if (atOnce !== undefined) {
      observe?.(requestLabel(request), atOnce.status, (performance.now() - t0) / 1000)
      return atOnce
    }
    const started = currentTurn()
    let response: Response | Promise<Response>
    try {
      response = app.fetch(request)
    } catch (error) {
      return failed(app, request, t0, error)
    }
    if (!(response instanceof Promise)) {
      observe?.(requestLabel(request), response.status, (performance.now() - t0) / 1000)
      return response
    }
    return response.then(r => {
      observe?.(requestLabel(request), r.status, (performance.now() - t0) / 1000)
      return currentTurn() !== started && sentInPieces(request, r) ? inOneWrite(r) : r
    }, error => failed(app, request, t0, error))
  }
}
