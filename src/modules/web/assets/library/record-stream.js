// The record button's live stream (docs/realtime.md "In the browser"): GET /v1/realtime on this site
// with the signed-in session (the cookie, the page's CSRF token as the subprotocol notesvc-csrf.<token>,
// notesvc-library.sandbox in the sandbox library), OpenAI's transcription events, notesvc's stream
// events. Nothing is lost on a dropped connection: the audio since the server last confirmed what it
// keeps (notesvc.stream.kept) stays in memory; the page connects again with ?resume=<token> and sends
// it again from the point the server names (notesvc.stream.resumed's audio_seconds).
import { csrfToken, library as libraryAtStart, workspaceId } from './api.js'
import { base64Pcm, STREAM_RATE } from './pcm.js'

const SESSION = { type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: STREAM_RATE }, turn_detection: { type: 'server_vad' } } } } }
/** while nothing is sent (paused), an update that changes nothing, so the server's idle timeout does not end the stream */
const KEEPALIVE_MS = 10_000
/** a connection that has answered nothing for this long (neither kept nor the keep-alive's answer) is taken as lost */
const SILENT_MS = 20_000
const RETRY_MS = [500, 1000, 2000, 3000]

/**
 * Opens the stream. `on` receives: ready(), partial(itemId, text), completed(itemId, text), error(error),
 * lost(), back(), gaveUp(stream), ended(code: 0 when it never opened), finished(event). Returns push(pcm), finish(), the
 * stream's description (`stream()`), and close().
 */
export function openLiveStream({ style, on }) {
  /** audio not yet confirmed kept, as { start, pcm } in samples from the stream's start */
  let chunks = []
  let recorded = 0
  let sent = 0
  let stream = null
  let socket = null
  let ready = false
  let finishing = false
  /** the socket notesvc.stream.finish went on (sent again on a new one) */
  let finishSentOn = null
  let finished = false
  let lostAt = 0
  let attempt = 0
  let lastSent = Date.now()
  let lastHeard = Date.now()

  function url(resume) {
    const p = new URLSearchParams({ intent: 'transcription' })
    if (style) p.set('style', style)
    if (resume) p.set('resume', resume)
    return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/realtime?${p}`
  }
  // the library the stream started in, also when the page switches while it runs
  const library = libraryAtStart === 'sandbox' ? ['notesvc-library.sandbox'] : []
  // and the workspace the page works in (a WebSocket sends no X-Notesvc-Workspace: a subprotocol names it)
  const workspace = workspaceId() ? [`notesvc-workspace.${workspaceId()}`] : []
  const protocols = () => ['realtime', `notesvc-csrf.${csrfToken()}`, ...library, ...workspace]

  function send(event) {
    socket.send(JSON.stringify(event))
    lastSent = Date.now()
  }

  /** the audio from `sent` on, on a socket that is ready */
  function pump() {
    if (!ready) return
    for (const c of chunks) {
      const end = c.start + c.pcm.length
      if (end <= sent) continue
      send({ type: 'input_audio_buffer.append', audio: base64Pcm(c.pcm.subarray(Math.max(0, sent - c.start))) })
      sent = end
    }
    // a server that cannot resume confirms nothing: nothing is kept for it
    if (!stream) chunks = []
    if (finishing && finishSentOn !== socket) {
      finishSentOn = socket
      send({ type: 'notesvc.stream.finish', event_id: 'finish' })
    }
  }

  function keep(seconds) {
    const upTo = Math.round(seconds * STREAM_RATE)
    chunks = chunks.filter(c => c.start + c.pcm.length > upTo)
  }

  function connect(resume) {
    const ws = new WebSocket(url(resume), protocols())
    socket = ws
    let opened = false
    let configured = false
    let resumed = !resume
    const mine = f => e => { if (ws === socket) f(e) }
    const becomeReady = () => {
      if (!configured || !resumed || ready) return
      ready = true
      if (lostAt) { lostAt = 0; attempt = 0; on.back() } else on.ready()
      pump()
    }
    ws.onopen = mine(() => { opened = true; lastHeard = Date.now() })
    ws.onclose = mine(e => closed(e.code, opened))
    ws.onmessage = mine(e => {
      lastHeard = Date.now()
      let ev
      try { ev = JSON.parse(e.data) } catch { return }
      switch (ev.type) {
        case 'session.created': return send(SESSION)
        case 'session.updated': configured = true; return becomeReady()
        case 'notesvc.stream.created': stream = ev.stream; return
        case 'notesvc.stream.resumed':
          stream = ev.stream
          sent = Math.round(ev.stream.audio_seconds * STREAM_RATE)
          keep(ev.stream.audio_seconds)
          resumed = true
          return becomeReady()
        case 'notesvc.stream.kept': return keep(ev.audio_seconds)
        // the turn's whole text so far (notesvc's event): unlike OpenAI's deltas it shows revisions too
        case 'notesvc.transcription.partial': return on.partial(ev.item_id, ev.text)
        case 'conversation.item.input_audio_transcription.completed': return on.completed(ev.item_id, ev.transcript)
        case 'notesvc.stream.finished': finished = true; return on.finished(ev)
        case 'error': return on.error(ev.error)
      }
    })
  }

  function closed(code, opened) {
    ready = false
    socket = null
    if (finished) return
    // the server ended the stream on purpose (idle, engine failure, credits, the stream taken over by
    // another connection: 4000): its error event said why
    if (opened && (code === 1000 || code === 1008 || code === 1011 || code >= 4000)) return on.ended(code)
    if (!stream) return on.ended(opened ? 1006 : 0)
    if (!lostAt) { lostAt = Date.now(); on.lost() }
    if (Date.now() - lostAt > stream.resume_seconds * 1000) return on.gaveUp(stream)
    setTimeout(() => connect(stream.resume_token), RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)])
  }

  /** A socket that stopped answering (a cut that sent no reset) is given up and replaced. */
  const watch = setInterval(() => {
    if (!socket || finished) return
    if (ready && Date.now() - lastSent > KEEPALIVE_MS) send(SESSION)
    if (stream && Date.now() - lastHeard > SILENT_MS) {
      const dead = socket
      socket = null
      dead.close()
      closed(1006, true)
    }
  }, 1000)

  connect(null)
  return {
    push(pcm) {
      chunks.push({ start: recorded, pcm })
      recorded += pcm.length
      if (socket && socket.readyState === WebSocket.OPEN) pump()
    },
    /** sends what is left and notesvc.stream.finish (at once, or once connected again) */
    finish() {
      finishing = true
      if (socket && socket.readyState === WebSocket.OPEN) pump()
    },
    stream: () => stream,
    seconds: () => recorded / STREAM_RATE,
    close() {
      clearInterval(watch)
      finished = true
      if (socket) socket.close(1000)
    },
  }
}
