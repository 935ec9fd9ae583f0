/**
 * A speech-recognition engine. The pipeline decodes media to 16 kHz mono and hands the engine one
 * chunk of samples at a time (at most 45 s, chunked.ts), so a two-hour recording never sits in memory
 * whole; the engine answers with timed segments relative to the chunk's start.
 */
export const SAMPLE_RATE = 16_000

/** One word and when it was said (seconds), for engines that report word times (PocketSphinx). */
export interface TimedWord {
  word: string
  start: number
  end: number
  /**
   * how sure the engine is that it heard this word, 0 to 1, when it says (PocketSphinx's word
   * posterior); not where it is (an aligned word's fit is not this)
   */
  confidence?: number
}

export interface TranscriptSegment {
  /** seconds from the start of the recording */
  start: number
  end: number
  text: string
  /** the segment's words with their times, when the engine gives them */
  words?: TimedWord[]
  /** who said it: the note's speaker label ("A", "B", …), when the recording was diarized */
  speaker?: string
  /** where the chunk that holds it starts, in 10 ms frames from the start of the recording (OpenAI's `seek`) */
  seek?: number
  /** mean natural log of the words' probabilities, when the engine gives them (PocketSphinx's word posteriors) */
  avgLogprob?: number
  /** the sampling temperature it was decoded at: 0 for greedy decoding (whisper.cpp) */
  temperature?: number
  /** set when a person corrected its words: whether they were aligned to the audio or spread over it in proportion */
  timing?: 'aligned' | 'proportional'
}

export interface ChunkTranscription {
  /** times relative to the start of the chunk */
  segments: TranscriptSegment[]
  /** the language the engine heard (ISO 639-1), or null when it cannot tell */
  language: string | null
}

export interface TranscribeOptions {
  /** ISO 639-1 code, or null to let the engine detect it */
  language: string | null
  signal?: AbortSignal
  /**
   * Decode differently from the first time: the chunk's first transcription fell into a repetition
   * loop. whisper.cpp samples with a temperature instead of greedy decoding; an engine with nothing
   * else to try decodes as before.
   */
  fallback?: boolean
  /** text the recording is expected to resemble (names, spelling): whisper.cpp's initial prompt */
  prompt?: string
  /** translate the speech into English instead of transcribing it (whisper's translate task) */
  translate?: boolean
}

export interface AsrEngine {
  readonly name: string
  /** gives each segment's `words` with their times */
  readonly wordTimes?: boolean
  /** can translate speech into English (`TranscribeOptions.translate`) */
  readonly translates?: boolean
  /** true when the engine (or its model) hears English only, so another language cannot be asked for */
  englishOnly?(): boolean
  /** Throws AsrUnavailableError when the engine cannot run here (missing model or program). */
  ready(): Promise<void>
  /** `samples`: 16 kHz mono, float32 in [-1, 1]. */
  transcribeChunk(samples: Float32Array, opts: TranscribeOptions): Promise<ChunkTranscription>
  /** an engine that sends speech to a server: which, and whether it answered when last asked (never waits) */
  server?(): SpeechServerStatus
}

/** A speech server an engine uses, as health and doctor name it. */
export interface SpeechServerStatus {
  /** its URL, without credentials (a key is never shown) */
  url: string
  /** whether it answered when last asked; null before it was */
  reachable: boolean | null
  /** when it was last asked (ISO 8601) */
  checkedAt?: string
  /** what is wrong, when it did not answer or answered with a refusal */
  problem?: string
}

/** The engine cannot run on this host; the message names what is missing and the command that fixes it. */
export class AsrUnavailableError extends Error {}
