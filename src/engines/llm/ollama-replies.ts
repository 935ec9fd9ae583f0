import type { SummaryInput, SummaryOutput } from './engine'
import { clean, cleanList, cleanTitle } from './ollama-prompts'
import type { ModelBullets, ModelMeeting, ModelNote, ModelTranscript } from './style-schemas'

/** How the model's reply in each style's schema becomes a summary: the fields that must hold text, and the shaping. */
interface StyleReply<T> {
  textFields: string[]
  shape(reply: T, input: SummaryInput): SummaryOutput
}

const optional = (v: string | null) => (v === null || !clean(v) || /^(null|none|n\/a|unknown)$/i.test(clean(v)) ? null : clean(v))

export const STYLE_REPLIES: { note: StyleReply<ModelNote>; transcript: StyleReply<ModelTranscript>; bulletpoints: StyleReply<ModelBullets>; 'meeting-notes': StyleReply<ModelMeeting> } = {
  transcript: {
    textFields: ['title'],
    shape(r, input) {
      const segments = (input.segments ?? []).map(s => ({ start: s.start, end: s.end, text: s.text }))
      return { title: cleanTitle(r.title, input.text), summary: input.text, structuredContent: { transcript: { segments } } }
    },
  },
  bulletpoints: {
    textFields: ['title'],
    shape(r, input) {
      const bullets = cleanList(r.bullets)
      return {
        title: cleanTitle(r.title, bullets[0] ?? input.text),
        summary: bullets.map(b => `- ${b}`).join('\n'),
        structuredContent: { bulletpoints: { bullets } },
      }
    },
  },
  'meeting-notes': {
    textFields: ['title', 'summary'],
    shape(r, input) {
      const actionItems = r.actionItems
        .map(a => ({ task: clean(a.task), owner: optional(a.owner), due: optional(a.due) }))
        .filter(a => a.task)
      const summary = clean(r.summary)
      return {
        title: cleanTitle(r.title, summary || input.text),
        summary,
        structuredContent: {
          'meeting-notes': { summary, attendees: cleanList(r.attendees), decisions: cleanList(r.decisions), actionItems },
        },
      }
    },
  },
  note: {
    textFields: ['title', 'summary'],
    shape(r, input) {
      const sections = r.sections
        .map(s => ({ heading: clean(s.heading), points: cleanList(s.points) }))
        .filter(s => s.heading || s.points.length)
      const summary = clean(r.summary) || sections.flatMap(s => s.points).slice(0, 3).join(' ')
      return { title: cleanTitle(r.title, summary || input.text), summary, structuredContent: { note: { summary, sections } } }
    },
  },
}
