import { MAX_TAG_NAME } from './model'
import { nameKey } from './names'

/** The most tags suggested for one note. */
const MAX_SUGGESTIONS = 5
/** Headings that name no topic: the builtin engine's fallbacks ("Summary", "Part 2"). */
const NO_TOPIC = /^(summary|part \d+)$/i

/**
 * Tags suggested from a note's summary: the topics of its structured content (the `note` style's
 * section headings, which the builtin engine makes from each topic segment's keywords, "Budget,
 * hiring and travel", and Ollama writes as headings), each keyword or phrase one suggestion, first
 * topics first; never one in `applied` (name keys). Nothing for the other styles, which have no topics.
 */
export function suggestedTags(structuredContent: string | null, applied: ReadonlySet<string>): string[] {
  if (!structuredContent) return []
  let sections: unknown
  try {
    sections = (JSON.parse(structuredContent) as { note?: { sections?: unknown } }).note?.sections
  } catch {
    return []
  }
  if (!Array.isArray(sections)) return []
  const out = new Map<string, string>()
  for (const s of sections) {
    const heading = typeof (s as { heading?: unknown })?.heading === 'string' ? (s as { heading: string }).heading : ''
    for (const part of heading.split(/,\s*|\s+and\s+|\s*[;/&]\s*/)) {
      const name = part.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase()
      const key = nameKey(name)
      if (!name || [...name].length > MAX_TAG_NAME || NO_TOPIC.test(name) || applied.has(key) || out.has(key)) continue
      out.set(key, name)
      if (out.size === MAX_SUGGESTIONS) return [...out.values()]
    }
  }
  return [...out.values()]
}
