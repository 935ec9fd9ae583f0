import type { TranscriptSegment } from '../asr/engine'

export type StyleId = 'note' | 'transcript' | 'bulletpoints' | 'meeting-notes'

export interface SummaryInput {
  text: string
  styleId: StyleId
  /** timed segments, when the text is a transcript (the `transcript` style keeps them) */
  segments?: TranscriptSegment[]
  language?: string | null
}

export interface SummaryOutput {
  title: string
  summary: string
  /** keyed by style, per DECISIONS.md "Structured content" */
  structuredContent: Record<string, unknown>
}

/** Writes summaries in a style. The summaries issue brings the Ollama and builtin engines. */
export interface LlmEngine {
  readonly name: string
  summarize(input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput>
}
