/**
 * One realtime transcription session: the state behind one /v1/realtime socket. Client frames go
 * through the protocol layer (protocol.ts) into a LiveRecognizer; the recognizer's events come back as
 * OpenAI's server events. No socket here: the route gives `send` and `close`.
 */
import { parseClientFrame, serverEvents, type NextId, type ProtocolError } from './protocol'
import type { LiveRecognizer, LiveRecognizerFactory, RecognizerEvent } from './recognizer'
import { DEFAULT_SESSION, type LiveSessionConfig } from './session-config'

export interface SessionIo {
  send(event: { type: string }): void
  /** ends the socket (after an engine failure) */
  close(code: number, reason: string): void
}

/** WebSocket close code for an engine failure (1011: the server met an unexpected condition). */
export const CLOSE_ENGINE_FAILED = 1011

function invalid(code: string, message: string, param: string | null, eventId: string | null): ProtocolError {
  return { type: 'invalid_request_error', code, message, param, event_id: eventId }
}

export function createRealtimeSession(opts: { sessionId: string; nextId: NextId; recognizers: LiveRecognizerFactory; io: SessionIo }) {
  const { sessionId, nextId, io } = opts
  const events = serverEvents(nextId)
  let config: LiveSessionConfig = DEFAULT_SESSION
  let recognizer: LiveRecognizer | null = null
  let ended = false
  /** the turn being heard, when one is */
  let current: string | null = null
  /** turns committed (by the client or by voice activity) whose final has not come yet, oldest first */
  const awaitingFinal: string[] = []
  let previous: string | null = null
  /** bytes appended since the last commit or clear */
  let uncommittedBytes = 0
  /** the text each turn's deltas have sent so far */
  const sent = new Map<string, string>()

  const send = (event: { type: string }) => {
    if (!ended) io.send(event)
  }
  const newItem = () => (current ??= nextId('item'))

  function commitTurn(item: string) {
    send(events.committed(item, previous))
    previous = item
    awaitingFinal.push(item)
    if (current === item) current = null
    uncommittedBytes = 0
  }

  /** Deltas are appended text: a partial that only extends what was sent sends the rest; a revision waits for the completed transcript. */
  function partial(text: string) {
    const item = current ?? awaitingFinal.at(-1) ?? newItem()
    const before = sent.get(item) ?? ''
    if (text.length <= before.length || !text.startsWith(before)) return
    sent.set(item, text)
    send(events.delta(item, text.slice(before.length)))
  }

  function onRecognizer(event: RecognizerEvent) {
    if (ended) return
    switch (event.kind) {
      case 'speech_started':
        return send(events.speechStarted(newItem(), event.at * 1000))
      case 'speech_stopped': {
        if (current === null) return
        send(events.speechStopped(current, event.at * 1000))
        return commitTurn(current)
      }
      case 'partial':
        return partial(event.text)
      case 'final': {
        const item = awaitingFinal.shift() ?? current ?? newItem()
        if (item === current) current = null
        sent.delete(item)
        return send(events.completed(item, event.text, Math.max(0, event.end - event.start)))
      }
      case 'failed':
        send(events.error({ type: 'server_error', code: 'engine_failed', message: `The live engine failed: ${event.message}. Start a new stream; the audio sent so far was not kept.`, param: null, event_id: null }))
        ended = true
        io.close(CLOSE_ENGINE_FAILED, 'live engine failed')
    }
  }

  function started(): LiveRecognizer {
    return (recognizer ??= opts.recognizers(config, onRecognizer))
  }

  function update(next: LiveSessionConfig, eventId: string | null, shape: 'ga' | 'beta') {
    if (recognizer && next.sampleRate !== config.sampleRate) {
      return send(events.error(invalid('invalid_value', `The sample rate cannot change once audio has been sent (it is ${config.sampleRate}); start a new stream to use ${next.sampleRate}.`, 'session.audio.input.format.rate', eventId)))
    }
    config = next
    send(events.sessionUpdated(sessionId, config, shape))
  }

  function message(frame: unknown) {
    if (ended) return
    const parsed = parseClientFrame(frame, config)
    if (!parsed.ok) return send(events.error(parsed.error))
    const event = parsed.event
    switch (event.type) {
      case 'session.update':
      case 'transcription_session.update':
        return update(event.config, event.eventId, event.type === 'session.update' ? 'ga' : 'beta')
      case 'input_audio_buffer.append':
        if (event.pcm.byteLength === 0) return
        uncommittedBytes += event.pcm.byteLength
        return started().push(event.pcm)
      case 'input_audio_buffer.commit':
        if (uncommittedBytes === 0) {
          return send(events.error(invalid('input_audio_buffer_commit_empty', 'The input audio buffer is empty: append audio (input_audio_buffer.append) before committing it.', null, event.eventId)))
        }
        commitTurn(newItem())
        return started().commit()
      case 'input_audio_buffer.clear':
        uncommittedBytes = 0
        recognizer?.clear()
        if (current) sent.delete(current)
        current = null
        return send(events.cleared())
    }
  }

  return {
    open: () => send(events.sessionCreated(sessionId, config)),
    message,
    /** the socket closed: the recognizer finishes and is released; nothing more is sent */
    async closed() {
      ended = true
      await recognizer?.close()
    },
  }
}
