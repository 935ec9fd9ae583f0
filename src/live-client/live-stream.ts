/**
 * One live stream from the command line, start to end (docs/realtime.md, "From the command line"):
 * connect, configure the session (24 kHz pcm16, server voice-activity detection), send the audio as
 * it comes, show partials and finals, and at the end (the audio is over, or Ctrl+C) ask the server to
 * finish (`notesvc.stream.finish`) and wait for `notesvc.stream.finished`, which names the note.
 */
import { openRealtime, type RealtimeSocket, type ServerEvent } from './realtime-connection'
import { STREAM_RATE } from './audio-input'
import type { LivePrinter } from './live-printer'

export interface LiveStreamOptions {
  server: string
  key: string
  /** the note's summary style and title (the route's query) */
  query: { style?: string; title?: string }
  /** a two-letter language code, or null to leave it to the server */
  language: string | null
  /** the audio in 100-ms pieces of 24 kHz pcm16, at the pace it should be sent; it ends when `signal` aborts */
  audio: (signal: AbortSignal) => AsyncIterable<Uint8Array>
  /** aborted at the first Ctrl+C: the audio ends and the stream is finished */
  stop: AbortSignal
  /** aborted at the second Ctrl+C: stop waiting for the note */
  quit: AbortSignal
  printer: LivePrinter
}

interface StreamInfo {
  id: string
  note_id: string
  resume_seconds: number
}

export type LiveOutcome =
  /** the server made the note */
  | { kind: 'finished'; note: { id: string; status: string; url: string; page: string }; creditsCharged: number; audioSeconds: number }
  /** the server has no notesvc.stream extension: the transcript printed is all there is */
  | { kind: 'no-note' }
  /** Ctrl+C twice: the socket was closed (1000) without waiting; the server finishes the note by itself */
  | { kind: 'left'; stream: StreamInfo | null }

/** The stream ended in a way the user must hear about (connection lost, engine failed); the message says what follows. */
class LiveStreamError extends Error {}

const FINISH_EVENT = 'cli_finish'
const LAST_TURN_EVENT = 'cli_last_turn'
const CONFIGURE_EVENT = 'cli_configure'

interface Turn {
  start: number | null
  end: number | null
  text: string
}

function sessionUpdate(language: string | null) {
  return {
    type: 'session.update',
    event_id: CONFIGURE_EVENT,
    session: {
      type: 'transcription',
      audio: { input: { format: { type: 'audio/pcm', rate: STREAM_RATE }, ...(language ? { transcription: { language } } : {}), turn_detection: { type: 'server_vad' } } },
    },
  }
}

export async function runLiveStream(opts: LiveStreamOptions): Promise<LiveOutcome> {
  const { printer } = opts
  const socket = await openRealtime(opts.server, opts.key, opts.query)
  const turns = new Map<string, Turn>()
  const turn = (item: string) => turns.get(item) ?? turns.set(item, { start: null, end: null, text: '' }).get(item)!
  /** committed turns whose final has not come */
  const pending = new Set<string>()
  let stream: StreamInfo | null = null
  let keptSeconds = 0
  let wholePartials = false
  let settle: (outcome: LiveOutcome | Error) => void = () => {}
  const settled = new Promise<LiveOutcome | Error>(resolve => (settle = resolve))
  let configured: () => void = () => {}
  const ready = new Promise<void>(resolve => (configured = resolve))
  const audioDone = new AbortController()
  const sent = { seconds: 0, finishing: false }
  /** the server does not know notesvc.stream.finish: the last turn is committed and the socket closed */
  let fallback: { answered: boolean } | null = null

  const closeIfFallbackDone = () => {
    if (fallback?.answered && pending.size === 0) {
      socket.close(1000)
      settle({ kind: 'no-note' })
    }
  }

  function onError(error: Record<string, any>) {
    if (error.event_id === FINISH_EVENT && error.code === 'unknown_event') {
      fallback = { answered: false }
      printer.notice('This server makes no note of a live stream (it does not know notesvc.stream.finish); the lines above are all that is kept.')
      return socket.send({ type: 'input_audio_buffer.commit', event_id: LAST_TURN_EVENT })
    }
    if (error.event_id === LAST_TURN_EVENT && fallback) {
      fallback.answered = true
      return closeIfFallbackDone()
    }
    if (error.event_id === CONFIGURE_EVENT) return settle(new LiveStreamError(`the server refused the session's settings: ${error.message}`))
    printer.notice(`notesvc: ${error.message ?? error.code}`)
  }

  function onEvent(e: ServerEvent) {
    switch (e.type) {
      case 'session.created':
        return socket.send(sessionUpdate(opts.language))
      case 'session.updated':
        return configured()
      case 'notesvc.stream.created':
      case 'notesvc.stream.resumed':
        stream = e.stream
        return printer.notice(`Live: stream ${e.stream.id}, note ${e.stream.note_id}. Ctrl+C ends the stream and makes the note.`)
      case 'notesvc.stream.kept':
        keptSeconds = e.audio_seconds
        return
      case 'input_audio_buffer.speech_started':
        turn(e.item_id).start = e.audio_start_ms / 1000
        return
      case 'input_audio_buffer.speech_stopped':
        turn(e.item_id).end = e.audio_end_ms / 1000
        return
      case 'input_audio_buffer.committed':
        pending.add(e.item_id)
        if (fallback) fallback.answered = true
        return
      case 'conversation.item.input_audio_transcription.delta': {
        if (wholePartials) return
        const t = turn(e.item_id)
        t.text += e.delta
        return printer.partial(t.text)
      }
      // notesvc's whole partial, which carries revisions too (deltas only append): once the server
      // sends them, they alone are shown
      case 'notesvc.transcription.partial':
        wholePartials = true
        return printer.partial(e.text)
      case 'conversation.item.input_audio_transcription.completed': {
        const t = turn(e.item_id)
        // a turn ended by the stream's end (no speech_stopped) ends where the audio sent did
        printer.final(e.transcript, t.start, t.end ?? (t.start !== null ? sent.seconds : null))
        turns.delete(e.item_id)
        pending.delete(e.item_id)
        return closeIfFallbackDone()
      }
      case 'notesvc.stream.finished':
        return settle({ kind: 'finished', note: e.note, creditsCharged: e.credits_charged, audioSeconds: e.audio_seconds })
      case 'error':
        return onError(e.error ?? {})
    }
  }

  socket.onEvent(onEvent)
  void socket.closed.then(({ code, reason }) => {
    audioDone.abort()
    settle(new LiveStreamError(lostMessage(code, reason, stream, keptSeconds, sent.finishing)))
  })
  opts.quit.addEventListener('abort', () => {
    socket.close(1000)
    settle({ kind: 'left', stream })
  })

  const sending = sendAudio(socket, opts, { ready, audioDone, settled, sent })
  const outcome = await settled
  audioDone.abort()
  await sending
  if (outcome instanceof Error) throw outcome
  return outcome
}

/** The audio, once the session is configured, then the finish (unless the stream has settled meanwhile). */
async function sendAudio(
  socket: RealtimeSocket,
  opts: LiveStreamOptions,
  { ready, audioDone, settled, sent }: { ready: Promise<void>; audioDone: AbortController; settled: Promise<unknown>; sent: { seconds: number; finishing: boolean } },
) {
  const over = AbortSignal.any([opts.stop, audioDone.signal])
  const first = await Promise.race([ready.then(() => 'ready' as const), settled.then(() => 'settled' as const), abortOf(over)])
  if (first !== 'ready') {
    if (first === 'stopped' && !audioDone.signal.aborted) finish(socket, sent)
    return
  }
  try {
    for await (const piece of opts.audio(over)) {
      if (audioDone.signal.aborted) return
      socket.send({ type: 'input_audio_buffer.append', audio: Buffer.from(piece).toString('base64') })
      sent.seconds += piece.length / 2 / STREAM_RATE
    }
  } catch (err) {
    // the microphone or the file failed midway: what was sent is kept, and the stream ends in order
    opts.printer.notice(`notesvc: ${err instanceof Error ? err.message : String(err)}; ending the stream with what was sent.`)
  }
  if (!audioDone.signal.aborted) finish(socket, sent)
}

const abortOf = (signal: AbortSignal) =>
  new Promise<'stopped'>(resolve => (signal.aborted ? resolve('stopped') : signal.addEventListener('abort', () => resolve('stopped'), { once: true })))

function finish(socket: RealtimeSocket, sent: { finishing: boolean }) {
  sent.finishing = true
  socket.send({ type: 'notesvc.stream.finish', event_id: FINISH_EVENT })
}

function lostMessage(code: number, reason: string, stream: StreamInfo | null, keptSeconds: number, finishing: boolean): string {
  const why = `the connection to the server closed before the note was named (${code}${reason ? `: ${reason}` : ''})`
  if (!stream) return `${why}; nothing was kept. Run the command again.`
  // the server had the finish: it makes the note from everything it received, without waiting for a resume
  if (finishing) return `${why}, after the stream was ended: the server makes note ${stream.note_id} from the audio it received; follow it with GET /v1/notes/${stream.note_id}/status.`
  return `${why}. The server keeps stream ${stream.id} ${stream.resume_seconds} s for a resume, then makes note ${stream.note_id} from the ${keptSeconds.toFixed(1)} s of audio it kept; follow it with GET /v1/notes/${stream.note_id}/status.`
}
