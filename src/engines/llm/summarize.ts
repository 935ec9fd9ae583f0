import type { LlmEngine, SummaryInput, SummaryOutput } from './engine'
import { sentencesText, speakerLabelledText, timedSentences } from './sentences'

/** Splits text into parts of at most `max` characters, at sentence ends where it can. */
function splitForContext(text: string, max: number): string[] {
  const parts: string[] = []
  let rest = text
  while (rest.length > max) {
    const window = rest.slice(0, max)
    const cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('? '), window.lastIndexOf('! '), window.lastIndexOf('\n'))
    const at = cut > max * 0.5 ? cut + 1 : max
    parts.push(rest.slice(0, at).trim())
    rest = rest.slice(at)
  }
  if (rest.trim()) parts.push(rest.trim())
  return parts
}

const unique = <T>(items: T[], key: (t: T) => string) => [...new Map(items.map(i => [key(i), i])).values()]

/**
 * Summarizes text of any length within the engine's context: text that fits goes in one call;
 * longer text is summarized in parts (map) and the parts' summaries together (reduce), repeated until
 * it fits. For meeting notes the parts' attendees, decisions and action items are kept, not
 * re-summarized.
 */
export async function summarizeLong(engine: LlmEngine, input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
  return summarizeParts(engine, withSentences(input), signal)
}

/**
 * A transcript without punctuation (PocketSphinx) is summarized as sentences cut from its word times
 * (./sentences.ts); the `transcript` style keeps the text as it was heard.
 */
function withSentences(input: SummaryInput): SummaryInput {
  if (input.styleId === 'transcript') return input
  const timed = timedSentences(input.text, input.segments)
  // with speakers (segments' `speaker` holds their names), each turn labelled with its speaker's name
  const text = speakerLabelledText(input.segments, timed) ?? (timed ? sentencesText(timed) : input.text)
  return timed ? { ...input, text, sentences: timed } : { ...input, text }
}

async function summarizeParts(engine: LlmEngine, input: SummaryInput, signal?: AbortSignal): Promise<SummaryOutput> {
  if (input.text.length <= engine.maxInputChars) return engine.summarize(input, signal)
  const parts = splitForContext(input.text, engine.maxInputChars)
  const partial: SummaryOutput[] = []
  for (const text of parts) {
    signal?.throwIfAborted()
    partial.push(await engine.summarize({ ...input, text, segments: undefined, sentences: undefined }, signal))
  }
  const combined = await summarizeParts(engine, { ...input, text: partial.map(p => p.summary).join('\n\n'), sentences: undefined }, signal)
  if (input.styleId === 'transcript') {
    return { ...combined, structuredContent: { transcript: { segments: input.segments ?? [] } } }
  }
  if (input.styleId === 'meeting-notes') {
    type Meeting = { summary: string; attendees: string[]; decisions: string[]; actionItems: { task: string; owner: string | null; due: string | null }[] }
    const all = partial.map(p => p.structuredContent['meeting-notes'] as Meeting)
    const top = combined.structuredContent['meeting-notes'] as Meeting
    return {
      ...combined,
      structuredContent: {
        'meeting-notes': {
          summary: top.summary,
          attendees: unique(all.flatMap(m => m.attendees), a => a.toLowerCase()),
          decisions: unique(all.flatMap(m => m.decisions), d => d.toLowerCase()),
          actionItems: unique(all.flatMap(m => m.actionItems), a => a.task.toLowerCase()),
        },
      },
    }
  }
  return combined
}
