/**
 * The fixed output sandbox keys get from every processing route (DECISIONS.md "Sandbox"): realistic,
 * the same for the same input, no model called, nothing charged.
 */
import type { StyleId } from '../../engines/llm/engine'

export const SANDBOX_NOTICE = 'Sandbox key: this output is fixed sample data. No model was called and no credits were charged.'

export const SANDBOX_TRANSCRIPT =
  'Welcome everyone to the weekly planning meeting. First, the launch date: we agreed to ship the beta on March third. ' +
  'Maria will prepare the release notes by Friday. Tom raised a concern about the upload limits, and we decided to keep them at five gigabytes for now. ' +
  'Action item: Tom will write the migration guide before the launch. That is all for today, thank you.'

export const SANDBOX_SEGMENTS = [
  { start: 0, end: 4.2, text: 'Welcome everyone to the weekly planning meeting.' },
  { start: 4.2, end: 9.8, text: 'First, the launch date: we agreed to ship the beta on March third.' },
  { start: 9.8, end: 13.1, text: 'Maria will prepare the release notes by Friday.' },
  { start: 13.1, end: 21.6, text: 'Tom raised a concern about the upload limits, and we decided to keep them at five gigabytes for now.' },
  { start: 21.6, end: 26.0, text: 'Action item: Tom will write the migration guide before the launch.' },
  { start: 26.0, end: 28.4, text: 'That is all for today, thank you.' },
]

export const SANDBOX_DURATION_SECONDS = 28.4

export interface FixedSummary {
  title: string
  summary: string
  structuredContent: Record<string, unknown>
}

const SUMMARY = 'The team set the beta launch for March third, kept the five-gigabyte upload limit, and assigned the release notes to Maria and the migration guide to Tom.'

export function sandboxSummary(styleId: StyleId): FixedSummary {
  const title = 'Weekly planning meeting'
  switch (styleId) {
    case 'bulletpoints': {
      const bullets = ['Beta ships on March third.', 'Maria prepares the release notes by Friday.', 'Upload limit stays at five gigabytes.', 'Tom writes the migration guide before launch.']
      return { title, summary: bullets.map(b => `- ${b}`).join('\n'), structuredContent: { bulletpoints: { bullets } } }
    }
    case 'meeting-notes':
      return {
        title,
        summary: SUMMARY,
        structuredContent: {
          'meeting-notes': {
            summary: SUMMARY,
            attendees: ['Maria', 'Tom'],
            decisions: ['Ship the beta on March third.', 'Keep the upload limit at five gigabytes.'],
            actionItems: [
              { task: 'Prepare the release notes', owner: 'Maria', due: 'Friday' },
              { task: 'Write the migration guide', owner: 'Tom', due: 'before the launch' },
            ],
          },
        },
      }
    case 'transcript':
      return { title, summary: SANDBOX_TRANSCRIPT, structuredContent: { transcript: { segments: SANDBOX_SEGMENTS } } }
    default:
      return {
        title,
        summary: SUMMARY,
        structuredContent: {
          note: {
            summary: SUMMARY,
            sections: [
              { heading: 'Decisions', points: ['Beta launch on March third.', 'Upload limit stays at five gigabytes.'] },
              { heading: 'Next steps', points: ['Maria: release notes by Friday.', 'Tom: migration guide before launch.'] },
            ],
          },
        },
      }
  }
}

export function sandboxAnswer(question: string): string {
  return `Sample answer to "${question.slice(0, 200)}": in the sample meeting the team agreed to ship the beta on March third.`
}

const round3 = (x: number) => Math.round(x * 1000) / 1000

/** The sample segments with word times (each word an equal share of its segment: sample data, not heard). */
export const SANDBOX_TIMED_SEGMENTS = SANDBOX_SEGMENTS.map(s => {
  const words = s.text.split(' ')
  const step = (s.end - s.start) / words.length
  return { ...s, words: words.map((w, i) => ({ word: w.replace(/[^\p{L}\p{N}'-]/gu, ''), start: round3(s.start + i * step), end: round3(s.start + (i + 1) * step) })) }
})
