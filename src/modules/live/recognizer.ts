/**
 * What the /v1/realtime route needs from a streaming speech engine, and all it needs. The protocol
 * layer turns client frames into these calls and these events into OpenAI's server events; the
 * engine (branch i32-engine: PocketSphinx through bun:ffi, whisper.cpp on a sliding window) implements
 * it. Times are seconds from the start of the stream's audio.
 */
import type { LiveSessionConfig } from './session-config'

/**
 * `turn` numbers the engine's turns (0, 1, …) in the order it hears them: the route names each turn's
 * item by it, so a client's commit racing the engine's voice detection never mixes two turns up.
 */
export type RecognizerEvent =
  /** the engine heard speech begin (server_vad); the route sends input_audio_buffer.speech_started */
  | { kind: 'speech_started'; turn: number; at: number }
  /** speech ended and the turn is closed; the route sends speech_stopped then committed */
  | { kind: 'speech_stopped'; turn: number; at: number }
  /** the turn's best text so far, whole (not a delta); it may revise earlier words */
  | { kind: 'partial'; turn: number; text: string }
  /**
   * the turn's final text with its times; the route sends committed (when speech_stopped did not)
   * then ...transcription.completed. Every commit() is answered by one final (empty when nothing
   * was said).
   */
  | { kind: 'final'; turn: number; text: string; start: number; end: number }
  /** the engine failed; the route sends an error event (server_error) and closes the stream */
  | { kind: 'failed'; message: string }

export interface LiveRecognizer {
  /** 16-bit little-endian mono PCM at the session's sample rate, whole samples */
  push(pcm: Uint8Array): void
  /** the client ended the turn (input_audio_buffer.commit): finish it and emit its final */
  commit(): void
  /** drop audio not yet part of a final (input_audio_buffer.clear) */
  clear(): void
  /** the stream ends: emit any last final, then release the engine; resolves when done */
  close(): Promise<void>
}

/** One recognizer per socket, made when the session is configured (rate, language, turn detection). */
export type LiveRecognizerFactory = (config: LiveSessionConfig, emit: (event: RecognizerEvent) => void) => LiveRecognizer
