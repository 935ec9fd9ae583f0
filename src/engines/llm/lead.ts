import type { LlmEngine, SummaryInput, SummaryOutput } from './engine'

/**
 * A minimal offline summarizer used until the builtin and Ollama engines arrive: the leading
 * sentences, shaped into the style's structure. It calls no model and invents nothing.
 */
export function sentencesOf(text: string): string[] {
  return text.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z0-9"'“])/).map(s => s.trim()).filter(Boolean)
}

function titleFrom(sentences: string[]): string {
  const first = sentences[0] ?? ''
  const words = first.replace(/[.!?]+$/, '').split(' ')
  return words.length > 10 ? `${words.slice(0, 10).join(' ')}…` : words.join(' ') || 'Untitled recording'
}

export function createLeadSentencesEngine(leadCount = 5): LlmEngine {
  return {
    name: 'lead-sentences',
    maxInputChars: Number.POSITIVE_INFINITY,
    async answer(input) {
      return { answer: input.passages[0]?.text ?? 'The transcript does not say.' }
    },
    async summarize(input: SummaryInput): Promise<SummaryOutput> {
      const sentences = sentencesOf(input.text)
      const lead = sentences.slice(0, leadCount)
      const title = titleFrom(sentences)
      const summary = lead.join(' ')
      switch (input.styleId) {
        case 'transcript':
          return { title, summary: input.text, structuredContent: { transcript: { segments: input.segments ?? [] } } }
        case 'bulletpoints':
          return { title, summary: lead.map(s => `- ${s}`).join('\n'), structuredContent: { bulletpoints: { bullets: lead } } }
        case 'meeting-notes':
          return { title, summary, structuredContent: { 'meeting-notes': { summary, attendees: [], decisions: [], actionItems: [] } } }
        default:
          return { title, summary, structuredContent: { note: { summary, sections: lead.length ? [{ heading: 'Summary', points: lead }] : [] } } }
      }
    },
  }
}
