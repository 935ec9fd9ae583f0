/**
 * Speaker diarization: who spoke when. An engine beside speech recognition (engines/asr) and
 * summaries (engines/llm). The pipeline feeds a session the same 16 kHz mono samples it hands the ASR
 * engine, in order, as they are decoded (so diarization runs beside transcription, not after it), and
 * asks for the turns when the recording ends. Speakers are numbered from 0 in the order they first
 * speak; the caller turns the numbers into labels (A, B, …) and names.
 */
import { SAMPLE_RATE } from '../asr/engine'

export { SAMPLE_RATE }

/** A stretch of the recording said by one speaker (seconds from the start). */
export interface SpeakerTurn {
  start: number
  end: number
  /** 0, 1, …: the order in which the speakers are first heard */
  speaker: number
}

/** What the submitter says about how many people speak: an exact count, or bounds (each 1–32). */
export interface SpeakerHint {
  exact?: number
  min?: number
  max?: number
}

export interface Diarization {
  /** in time order; turns do not overlap (where two people speak at once, the louder/longer one) */
  turns: SpeakerTurn[]
  /** how many speakers were found (the highest `speaker` + 1; 0 for a recording without speech) */
  speakers: number
  /**
   * One voice print per speaker (index = speaker), unit length, from engines that compute them: a
   * named speaker is stored as a profile and recognised in later recordings of the account by cosine
   * similarity. Absent when the engine has none.
   */
  embeddings?: Float32Array[]
  /** the engine that produced it (`builtin`, `sherpa-onnx`, `channels`) */
  engine: string
}

export interface DiarizeOptions {
  speakers?: SpeakerHint
  signal?: AbortSignal
}

/** One recording's diarization: fed samples in order, asked for the turns once at the end. */
export interface DiarizationSession {
  /** the next samples of the recording: 16 kHz mono, float32 in [-1, 1] */
  feed(samples: Float32Array): void
  finish(opts?: DiarizeOptions): Promise<Diarization>
}

export interface DiarizationEngine {
  readonly name: string
  /** Throws DiarizationUnavailableError when the engine cannot run here (missing model or addon). */
  ready(): Promise<void>
  start(): DiarizationSession
}

/** The engine cannot run on this host; the message names what is missing and the command that fixes it. */
export class DiarizationUnavailableError extends Error {}

/** Convenience for callers holding a whole recording (tests, benchmarks, the synchronous routes). */
export async function diarizeSamples(engine: DiarizationEngine, samples: Float32Array, opts: DiarizeOptions = {}): Promise<Diarization> {
  const session = engine.start()
  const block = SAMPLE_RATE * 10
  for (let i = 0; i < samples.length; i += block) session.feed(samples.subarray(i, i + block))
  return session.finish(opts)
}
