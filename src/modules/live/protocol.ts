/**
 * OpenAI's realtime transcription protocol as notesvc speaks it (docs/realtime.md): client frames in,
 * validated events or the protocol's `error` event out; server events built here and nowhere else.
 * Pure: no socket, no clock, no engine. Nothing here throws to its caller: every fault in a frame,
 * however hostile, comes back as an `error` event the route sends while the socket stays open.
 */
import { DEFAULT_SESSION, readSessionUpdate, type LiveSessionConfig } from './session-config'

/** The largest text frame read. OpenAI allows 15 MiB per append; notesvc reads at most 1 MiB (about 21 s of 24 kHz audio). */
export const MAX_FRAME_BYTES = 1024 * 1024
const MAX_EVENT_ID_CHARS = 128

type ClientEvent =
  | { type: 'session.update' | 'transcription_session.update'; eventId: string | null; config: LiveSessionConfig }
  | { type: 'input_audio_buffer.append'; eventId: string | null; pcm: Uint8Array }
  | { type: 'input_audio_buffer.commit' | 'input_audio_buffer.clear'; eventId: string | null }
  /** notesvc's: the stream ends here; its note is made (docs/realtime.md "The stream and its note") */
  | { type: 'notesvc.stream.finish'; eventId: string | null }

export interface ProtocolError {
  /** always invalid_request_error for a client's fault */
  type: 'invalid_request_error' | 'server_error'
  code: string
  message: string
  param: string | null
  /** the event_id of the client event at fault, when it had one */
  event_id: string | null
}

export type ParsedFrame = { ok: true; event: ClientEvent } | { ok: false; error: ProtocolError }

const ACCEPTED_TYPES = [
  'session.update',
  'transcription_session.update',
  'input_audio_buffer.append',
  'input_audio_buffer.commit',
  'input_audio_buffer.clear',
  'notesvc.stream.finish',
]

function refuse(code: string, message: string, param: string | null = null, eventId: string | null = null): ParsedFrame {
  return { ok: false, error: { type: 'invalid_request_error', code, message, param, event_id: eventId } }
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

function decodeAudio(audio: unknown, eventId: string | null): ParsedFrame {
  if (typeof audio !== 'string') {
    return refuse('invalid_type', '`audio` must be a base64 string of 16-bit little-endian mono PCM.', 'audio', eventId)
  }
  if (!STRICT_BASE64.test(audio)) {
    return refuse('invalid_value', '`audio` is not valid base64; encode the raw PCM bytes with standard base64 (A-Z a-z 0-9 + /, = padding).', 'audio', eventId)
  }
  const pcm = new Uint8Array(Buffer.from(audio, 'base64'))
  if (pcm.byteLength % 2 !== 0) {
    return refuse('invalid_value', `\`audio\` decodes to ${pcm.byteLength} bytes, an odd number; 16-bit PCM has 2 bytes a sample: send whole samples.`, 'audio', eventId)
  }
  return { ok: true, event: { type: 'input_audio_buffer.append', eventId, pcm } }
}

function readEventId(value: unknown): { ok: true; id: string | null } | { ok: false; frame: ParsedFrame } {
  if (value === undefined || value === null) return { ok: true, id: null }
  if (typeof value !== 'string' || value.length > MAX_EVENT_ID_CHARS) {
    return { ok: false, frame: refuse('invalid_value', `\`event_id\` must be a string of at most ${MAX_EVENT_ID_CHARS} characters, or left out.`, 'event_id') }
  }
  return { ok: true, id: value }
}

function frameText(frame: unknown): string | ProtocolError {
  const tooLarge = (bytes: number): ProtocolError => ({
    type: 'invalid_request_error',
    code: 'frame_too_large',
    message: `The frame is ${bytes} bytes; send at most ${MAX_FRAME_BYTES} bytes a frame (split the audio into several input_audio_buffer.append events).`,
    param: null,
    event_id: null,
  })
  if (typeof frame !== 'string') {
    return {
      type: 'invalid_request_error',
      code: 'invalid_frame',
      message: 'Binary frames are not read; send each event as a JSON text frame, audio base64-encoded in input_audio_buffer.append.',
      param: null,
      event_id: null,
    }
  }
  // a UTF-16 string is at most 3 UTF-8 bytes a code unit; measure exactly only when it may be over
  if (frame.length > MAX_FRAME_BYTES) return tooLarge(Buffer.byteLength(frame))
  if (frame.length * 3 > MAX_FRAME_BYTES) {
    const bytes = Buffer.byteLength(frame)
    if (bytes > MAX_FRAME_BYTES) return tooLarge(bytes)
  }
  return frame
}

function parseEvent(text: string, session: LiveSessionConfig): ParsedFrame {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return refuse('invalid_json', 'The frame is not valid JSON; send one JSON object a frame, e.g. {"type":"input_audio_buffer.commit"}.')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return refuse('invalid_json', 'The frame must be a JSON object with a string `type`, e.g. {"type":"input_audio_buffer.commit"}.')
  }
  const fields = value as Record<string, unknown>
  const id = readEventId(fields.event_id)
  if (!id.ok) return id.frame
  const eventId = id.id
  if (typeof fields.type !== 'string') {
    return refuse('missing_required_parameter', 'The event has no string `type`; send one of: ' + ACCEPTED_TYPES.join(', ') + '.', 'type', eventId)
  }
  const type = fields.type
  switch (type) {
    case 'session.update':
    case 'transcription_session.update': {
      const result = readSessionUpdate(fields.session, type === 'session.update' ? 'ga' : 'beta', session)
      if (!result.ok) return refuse(result.error.code, result.error.message, result.error.param, eventId)
      return { ok: true, event: { type, eventId, config: result.config } }
    }
    case 'input_audio_buffer.append':
      return decodeAudio(fields.audio, eventId)
    case 'input_audio_buffer.commit':
    case 'input_audio_buffer.clear':
    case 'notesvc.stream.finish':
      return { ok: true, event: { type, eventId } }
    default: {
      const shown = type.length > 64 ? `${type.slice(0, 64)}…` : type
      return refuse('unknown_event', `Event type "${shown}" is not served: a notesvc realtime session transcribes only; send one of: ${ACCEPTED_TYPES.join(', ')}.`, 'type', eventId)
    }
  }
}

/**
 * Reads one client frame against the session as it stands (an update changes only the fields it
 * names). Never throws: an unexpected fault becomes a `server_error` event.
 */
export function parseClientFrame(frame: unknown, session: LiveSessionConfig = DEFAULT_SESSION): ParsedFrame {
  try {
    const text = frameText(frame)
    if (typeof text !== 'string') return { ok: false, error: text }
    return parseEvent(text, session)
  } catch {
    return {
      ok: false,
      error: { type: 'server_error', code: 'internal_error', message: 'The frame could not be read; send it again, and report it if it recurs.', param: null, event_id: null },
    }
  }
}

/** Server events. `nextId(prefix)` makes the ids (event_…, item_…), injected so tests can fix them. */
export type NextId = (prefix: 'event' | 'item' | 'sess') => string

/** The session as OpenAI's GA API shows it in session.created / session.updated. */
function gaSession(sessionId: string, config: LiveSessionConfig) {
  const vad = config.turnDetection
  return {
    type: 'transcription' as const,
    object: 'realtime.transcription_session',
    id: sessionId,
    audio: {
      input: {
        format: { type: 'audio/pcm', rate: config.sampleRate },
        transcription: { model: config.model, language: config.language, prompt: config.prompt },
        turn_detection: vad
          ? { type: vad.type, threshold: vad.threshold, prefix_padding_ms: vad.prefixPaddingMs, silence_duration_ms: vad.silenceDurationMs }
          : null,
        noise_reduction: null,
      },
    },
    include: null,
  }
}

/** The beta shape, answered to a client that sent transcription_session.update. */
function betaSession(sessionId: string, config: LiveSessionConfig) {
  const input = gaSession(sessionId, config).audio.input
  return {
    id: sessionId,
    object: 'realtime.transcription_session',
    input_audio_format: 'pcm16',
    input_audio_transcription: input.transcription,
    turn_detection: input.turn_detection,
  }
}

export interface StreamInfo {
  id: string
  note_id: string
  resume_token: string
  resume_seconds: number
  /** audio the server has kept: a resuming client sends its audio again from here */
  audio_seconds: number
  sample_rate: number
}

const round3 = (s: number) => Math.round(s * 1000) / 1000

export function serverEvents(nextId: NextId) {
  const event = <T extends string>(type: T) => ({ type, event_id: nextId('event') })
  return {
    sessionCreated: (sessionId: string, config: LiveSessionConfig) => ({ ...event('session.created'), session: gaSession(sessionId, config) }),
    sessionUpdated: (sessionId: string, config: LiveSessionConfig, shape: 'ga' | 'beta') =>
      shape === 'ga'
        ? { ...event('session.updated'), session: gaSession(sessionId, config) }
        : { ...event('transcription_session.updated'), session: betaSession(sessionId, config) },
    speechStarted: (itemId: string, audioStartMs: number) => ({ ...event('input_audio_buffer.speech_started'), audio_start_ms: Math.round(audioStartMs), item_id: itemId }),
    speechStopped: (itemId: string, audioEndMs: number) => ({ ...event('input_audio_buffer.speech_stopped'), audio_end_ms: Math.round(audioEndMs), item_id: itemId }),
    committed: (itemId: string, previousItemId: string | null) => ({ ...event('input_audio_buffer.committed'), previous_item_id: previousItemId, item_id: itemId }),
    cleared: () => event('input_audio_buffer.cleared'),
    delta: (itemId: string, delta: string) => ({ ...event('conversation.item.input_audio_transcription.delta'), item_id: itemId, content_index: 0, delta }),
    completed: (itemId: string, transcript: string, audioSeconds: number) => ({
      ...event('conversation.item.input_audio_transcription.completed'),
      item_id: itemId,
      content_index: 0,
      transcript,
      usage: { type: 'duration' as const, seconds: Math.ceil(audioSeconds) },
    }),
    error: (error: ProtocolError) => ({ ...event('error'), error }),
    // notesvc's own events (docs/realtime.md): clients written for OpenAI ignore them
    /** the turn's whole text so far, provisional: it may revise words a delta already sent */
    partial: (itemId: string, text: string) => ({ ...event('notesvc.transcription.partial'), item_id: itemId, text }),
    stream: (type: 'notesvc.stream.created' | 'notesvc.stream.resumed', stream: StreamInfo) => ({ ...event(type), stream }),
    kept: (audioSeconds: number) => ({ ...event('notesvc.stream.kept'), audio_seconds: round3(audioSeconds) }),
    finished: (f: { note: { id: string; status: string; url: string; page: string }; creditsCharged: number; audioSeconds: number; reason: string }) =>
      ({ ...event('notesvc.stream.finished'), note: f.note, credits_charged: f.creditsCharged, audio_seconds: round3(f.audioSeconds), reason: f.reason }),
  }
}

