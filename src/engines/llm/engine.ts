import type { TranscriptSegment } from '../asr/engine'
import type { TimedSentence } from './sentences'

/** The summary styles, in the order the interface lists them: the one declaration of the set. */
export const STYLE_IDS = ['note', 'transcript', 'bulletpoints', 'meeting-notes'] as const
export type StyleId = (typeof STYLE_IDS)[number]

export interface SummaryInput {
  text: string
  styleId: StyleId
  /** timed segments, when the text is a transcript (the `transcript` style keeps them) */
  segments?: TranscriptSegment[]
  /**
   * Set when the transcript had no punctuation and `text` is these sentences, cut from the word times
   * (./sentences.ts) by `summarizeLong`.
   */
  sentences?: TimedSentence[]
  language?: string | null
  /**
   * The recording's file name ("planning-meeting.wav"): the builtin engine's title when no sentence
   * of the transcript was heard clearly (its words' confidences, ./builtin/doubt.ts)
   */
  fileName?: string
}

export interface SummaryOutput {
  title: string
  summary: string
  /**
   * Keyed by style, per DECISIONS.md "Structured content":
   * - note: {"note": {"summary": string, "sections": [{"heading": string, "points": [string]}]}}
   * - bulletpoints: {"bulletpoints": {"bullets": [string]}}
   * - meeting-notes: {"meeting-notes": {"summary": string, "attendees": [string], "decisions": [string],
   *   "actionItems": [{"task": string, "owner": string|null, "due": string|null}]}}
   * - transcript: {"transcript": {"segments": [{"start": number, "end": number, "text": string}]}}
   */
  structuredContent: Record<string, unknown>
}

/** A passage of a transcript, found by retrieval, handed to the engine to answer from. */
export interface Passage {
  text: string
  /** where it starts in the transcript, in characters */
  offset: number
  score: number
}

export interface AnswerInput {
  question: string
  /** the most relevant passages, best first; the answer must come from these */
  passages: Passage[]
  /**
   * The transcript's sentences with their times, when it had no punctuation and they were cut from
   * its word times (./sentences.ts); the passages are then made of them, and an answer can say when
   * each sentence was said.
   */
  sentences?: TimedSentence[]
  language?: string | null
}

export interface AnswerOutput {
  answer: string
}

/**
 * Writes summaries in a style and answers questions from passages. Adapters: `ollama` (a local model
 * server) and `builtin` (offline, extractive, no model).
 */
export interface LlmEngine {
  readonly name: string
  /**
   * How many characters of text one call can take. Longer input is summarized map-reduce: in parts,
   * then the parts' summaries together.
   */
  readonly maxInputChars: number
  summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput>
  answer(input: AnswerInput, signal?: AbortSignal): Promise<AnswerOutput>
}

/** The engine cannot be used right now (server down, model not pulled, timeout): 502 upstream_failure. */
export class LlmUnavailableError extends Error {}

/** The model refused the content: 422 content_policy. */
export class LlmRefusalError extends Error {}
