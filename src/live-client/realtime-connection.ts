/**
 * The command line's side of GET /v1/realtime (docs/realtime.md): one WebSocket to a notesvc server,
 * its events as parsed JSON, and a refusal before the upgrade read as the server's error envelope.
 *
 * Through the `ws` API (under Bun, Bun's own implementation of it) rather than the WebSocket global:
 * when the server refuses the upgrade (401, 404, 503 with Retry-After), `unexpected-response` hands over
 * the status, the headers and the body, where the global WebSocket only says that it failed.
 */
import WebSocket from 'ws'

/** A server event: `type` and whatever else it carries (docs/realtime.md lists them). */
export type ServerEvent = { type: string } & Record<string, any>

/** The server answered the upgrade with an HTTP error (its envelope read), or could not be reached. */
export class StreamRefused extends Error {
  constructor(
    message: string,
    /** the HTTP status, or null when no answer came (connection refused, unknown host) */
    readonly status: number | null,
    /** seconds from Retry-After, when the server sent it */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message)
  }
}

export interface RealtimeSocket {
  send(event: { type: string } & Record<string, unknown>): void
  /** every server event, in order */
  onEvent(listener: (event: ServerEvent) => void): void
  /** ends the socket with `code` (1000: the stream is over and finished) */
  close(code?: number): void
  /** resolves when the socket has closed, by either side, with the code and reason */
  closed: Promise<{ code: number; reason: string }>
}

function envelopeMessage(body: string): { code: string | null; message: string | null } {
  try {
    const error = JSON.parse(body)?.error
    if (typeof error?.message === 'string') return { code: typeof error.code === 'string' ? error.code : null, message: error.message }
  } catch {
    // not the envelope: a proxy's page, or another server altogether
  }
  return { code: null, message: null }
}

/** What a refusal before the upgrade means for this command, and what to do about it. */
function refusal(status: number, headers: Record<string, string | string[] | undefined>, body: string, url: string): StreamRefused {
  const { code, message } = envelopeMessage(body)
  const said = message ? `: ${message}` : ''
  const retryHeader = Number(headers['retry-after'])
  const retryAfter = Number.isFinite(retryHeader) && retryHeader >= 0 ? retryHeader : null
  switch (status) {
    case 401:
      return new StreamRefused(`the server refused the key in NOTESVC_KEY (401 ${code ?? 'unauthorized'}${said || '.'}) Set NOTESVC_KEY to a live API key of that server.`, status)
    case 403:
      return new StreamRefused(`the key in NOTESVC_KEY may not transcribe (403 ${code ?? 'forbidden'}${said}). Use a key with the scope transcriptions:write (\`notesvc keys create --email you@example.com --scopes transcriptions:write,notes:read\`).`, status)
    case 404:
      return new StreamRefused(`${url} has no live transcription (GET /v1/realtime answered 404): that server is older than live streams or runs without a live engine. Update it, point --url at one that has them, or transcribe the file without a server: notesvc transcribe FILE.`, status)
    case 429:
    case 503:
      return new StreamRefused(`the server cannot take another live stream now (${status}${said}). Try again${retryAfter !== null ? ` in ${retryAfter} s (Retry-After)` : ' in a few seconds'}.`, status, retryAfter)
    default:
      return new StreamRefused(`the server refused the stream (${status}${code ? ` ${code}` : ''}${said || `: ${body.slice(0, 200)}`}).`, status, retryAfter)
  }
}

function unreachable(err: Error & { code?: string }, url: string): StreamRefused {
  const why = err.code === 'ECONNREFUSED' ? 'nothing listens there' : err.message
  return new StreamRefused(`cannot reach ${url} (${why}). Is \`notesvc serve\` running there? Point --url at the server's address.`, null)
}

/** The socket URL of a server address: http(s) → ws(s), with /v1/realtime and the query. */
function realtimeUrl(server: string, query: Record<string, string | undefined>): string {
  const url = new URL('/v1/realtime', server)
  url.protocol = url.protocol === 'https:' ? 'wss:' : url.protocol === 'http:' ? 'ws:' : url.protocol
  url.searchParams.set('intent', 'transcription')
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value)
  return url.href
}

/** Opens the socket: resolves once upgraded, or rejects with a StreamRefused that says what to do. */
export function openRealtime(server: string, key: string, query: Record<string, string | undefined> = {}): Promise<RealtimeSocket> {
  const ws = new WebSocket(realtimeUrl(server, query), { headers: { authorization: `Bearer ${key}` } })
  const listeners: Array<(event: ServerEvent) => void> = []
  const early: ServerEvent[] = []
  ws.on('message', data => {
    let event: ServerEvent
    try {
      event = JSON.parse(String(data))
    } catch {
      return // the server sends only JSON; anything else is not an event
    }
    if (listeners.length === 0) early.push(event)
    for (const listener of listeners) listener(event)
  })
  const closed = new Promise<{ code: number; reason: string }>(resolve => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })))
  return new Promise<RealtimeSocket>((resolve, reject) => {
    ws.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer | string) => (body += String(chunk)))
      response.on('end', () => {
        reject(refusal(response.statusCode ?? 0, response.headers, body, server))
        ws.terminate()
      })
    })
    ws.on('error', err => reject(unreachable(err, server)))
    ws.on('open', () =>
      resolve({
        send: event => ws.send(JSON.stringify(event)),
        onEvent(listener) {
          listeners.push(listener)
          for (const event of early.splice(0)) listener(event)
        },
        close: (code = 1000) => ws.close(code),
        closed,
      }),
    )
  })
}
