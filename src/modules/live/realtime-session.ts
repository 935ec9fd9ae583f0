/**
 * One realtime transcription session: the state behind one /v1/realtime socket. Client frames go
 * through the protocol layer (protocol.ts) into a LiveRecognizer and the stream (its audio kept, its
 * minutes charged: streams.ts); the recognizer's events come back as OpenAI's server events, each turn
 * named by the engine's turn number. No socket here: the route gives `send` and `close`.
 */
import { parseClientFrame, serverEvents, type NextId, type ProtocolError, type StreamInfo } from './protocol'
import type { LiveRecognizer, LiveRecognizerFactory, RecognizerEvent } from './recognizer'
import { DEFAULT_SESSION, type LiveSessionConfig, type SampleRate } from './session-config'
import { createTurnEvents } from './turn-events'
import type { FinishOutcome } from './stream-finish'

export interface SessionIo {
  send(event: { type: string }): void
  /** ends the socket */
  close(code: number, reason: string): void
}

/** What the session needs of its stream (streams.ts's hold on it). */
export interface SessionStream {
  info(): StreamInfo
  resumed: boolean
  /** sets the rate before any audio (a session.update); false once audio has been kept */
  setSampleRate(rate: number): boolean
  /** false: the account's credits do not cover the minute this audio starts */
  append(pcm: Uint8Array): Promise<boolean>
  finish(reason: string): Promise<FinishOutcome | null>
  detach(): Promise<void>
}

/** WebSocket close code for an engine failure (1011: the server met an unexpected condition). */
const CLOSE_ENGINE_FAILED = 1011
/** The stream continues on another connection (a resume): this one is closed with it. */
const CLOSE_RESUMED_ELSEWHERE = 4000

function invalid(code: string, message: string, param: string | null, eventId: string | null): ProtocolError {
  return { type: 'invalid_request_error', code, message, param, event_id: eventId }
}

export function createRealtimeSession(opts: { sessionId: string; nextId: NextId; recognizers: LiveRecognizerFactory; io: SessionIo; stream: SessionStream; publicUrl: string }) {
  const { sessionId, nextId, io, stream } = opts
  const events = serverEvents(nextId)
  let config: LiveSessionConfig = { ...DEFAULT_SESSION, sampleRate: stream.info().sample_rate as SampleRate }
  let recognizer: LiveRecognizer | null = null
  /** no more events are sent (the socket is closing or closed) */
  let ended = false
  /** the stream is ending or has ended: no more client events are taken (audio already queued is kept) */
  let ending = false
  /** audio still queued is dropped: the credits ran out, or the stream went to another connection */
  let dropAudio = false
  let audioSent = stream.resumed && stream.info().audio_seconds > 0
  /** bytes appended since the last commit or clear */
  let uncommittedBytes = 0
  /** audio goes to the stream, then to the engine, one append after another */
  let queue: Promise<void> = Promise.resolve()

  const send = (event: { type: string }) => {
    if (!ended) io.send(event)
  }
  const turns = createTurnEvents(events, nextId, send)

  /** a resumed stream's engine starts at the kept audio's end: its times are counted from the stream's start */
  const offset = stream.resumed ? stream.info().audio_seconds : 0

  function onRecognizer(event: RecognizerEvent) {
    if (ended) return
    if (offset && 'at' in event) event = { ...event, at: event.at + offset }
    else if (offset && event.kind === 'final') event = { ...event, start: event.start + offset, end: event.end + offset }
    switch (event.kind) {
      case 'speech_started':
      case 'speech_stopped':
      case 'partial':
      case 'final':
        return turns.event(event)
      case 'failed':
        send(events.error({ type: 'server_error', code: 'engine_failed', message: `The live engine failed: ${event.message}. The audio kept so far becomes the note (its transcript is made from the recording); start a new stream to go on.`, param: null, event_id: null }))
        void end('the live engine failed', CLOSE_ENGINE_FAILED)
    }
  }

  function started(): LiveRecognizer {
    return (recognizer ??= opts.recognizers(config, onRecognizer))
  }

  function update(next: LiveSessionConfig, eventId: string | null, shape: 'ga' | 'beta') {
    if (next.sampleRate !== config.sampleRate && (audioSent || recognizer || !stream.setSampleRate(next.sampleRate))) {
      return send(events.error(invalid('invalid_value', `The sample rate cannot change once audio has been sent (it is ${config.sampleRate}); start a new stream to use ${next.sampleRate}.`, 'session.audio.input.format.rate', eventId)))
    }
    config = next
    send(events.sessionUpdated(sessionId, config, shape))
  }

  function append(pcm: Uint8Array) {
    audioSent = true
    uncommittedBytes += pcm.byteLength
    queue = queue.then(async () => {
      if (dropAudio) return
      if (!(await stream.append(pcm))) {
        dropAudio = true
        send(events.error({ type: 'invalid_request_error', code: 'insufficient_credits', message: 'The account\'s credits do not cover the next minute of this stream, so it ends here; what was said up to now becomes the note. Top up (see GET /v1/account) and start a new stream to go on.', param: null, event_id: null }))
        return void end('the credits ran out', 1000)
      }
      if (!dropAudio) started().push(pcm)
    })
  }

  /** The stream ends: the last turn finished, the note made and announced, the socket closed. */
  async function end(reason: string, code = 1000): Promise<void> {
    if (ending) return
    ending = true
    await queue
    await recognizer?.close()
    const outcome = await stream.finish(reason)
    if (outcome) {
      send(events.finished({
        note: { id: outcome.noteId, status: outcome.status, url: `${opts.publicUrl}/v1/notes/${outcome.noteId}`, page: `${opts.publicUrl}/notes/${outcome.noteId}` },
        creditsCharged: outcome.creditsCharged, audioSeconds: outcome.audioSeconds, reason,
      }))
    }
    ended = true
    io.close(code, reason)
  }

  function message(frame: unknown) {
    if (ended || ending) return
    const parsed = parseClientFrame(frame, config)
    if (!parsed.ok) return send(events.error(parsed.error))
    const event = parsed.event
    switch (event.type) {
      case 'session.update':
      case 'transcription_session.update':
        return update(event.config, event.eventId, event.type === 'session.update' ? 'ga' : 'beta')
      case 'input_audio_buffer.append':
        return event.pcm.byteLength === 0 ? undefined : append(event.pcm)
      case 'input_audio_buffer.commit':
        if (uncommittedBytes === 0) {
          return send(events.error(invalid('input_audio_buffer_commit_empty', 'The input audio buffer is empty: append audio (input_audio_buffer.append) before committing it.', null, event.eventId)))
        }
        uncommittedBytes = 0
        // the engine answers with the turn's final, which sends committed then completed
        queue = queue.then(() => void (dropAudio || started().commit()))
        return
      case 'input_audio_buffer.clear':
        uncommittedBytes = 0
        queue = queue.then(() => void recognizer?.clear())
        return send(events.cleared())
      case 'notesvc.stream.finish':
        return void end('finished by the client')
    }
  }

  return {
    /** the stream is ending (finished by the client, or out of credits): no idle timeout applies while it finishes */
    ending: () => ending,
    open() {
      send(events.sessionCreated(sessionId, config))
      send(events.stream(stream.resumed ? 'notesvc.stream.resumed' : 'notesvc.stream.created', stream.info()))
    },
    message,
    kept: (audioSeconds: number) => send(events.kept(audioSeconds)),
    /** the stream continues elsewhere (or cannot be kept): this connection ends without making the note */
    lost(code: string, messageText: string) {
      send(events.error({ type: 'server_error', code, message: messageText, param: null, event_id: null }))
      ending = true
      dropAudio = true
      ended = true
      void queue.then(() => recognizer?.close())
      io.close(CLOSE_RESUMED_ELSEWHERE, code)
    },
    /**
     * The socket closed. `finish`: the client closed it normally (1000), so the stream ends and its
     * note is made; otherwise (a dropped connection, the idle timeout) it stays resumable.
     */
    async closed(finish: boolean) {
      if (ending) {
        ended = true
        return
      }
      ending = true
      ended = true
      await queue
      await recognizer?.close()
      if (finish) await stream.finish('the client closed the connection')
      else await stream.detach()
    },
  }
}
