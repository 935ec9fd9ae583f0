/** The markdown file a filed meeting becomes: its name and its text. */

/** The parts of a note the file is made of (a whole note from getNote has them all). */
export interface FiledNote {
  id: string
  title: string
  summary: string
  dateCreated: string
  structuredContent?: Record<string, unknown>
}

// Characters that are not allowed (or not wise) in a file name on Windows, macOS or Linux.
const UNSAFE_IN_FILE_NAME = /[\u0000-\u001f\u007f/\\:*?"<>|]+/g

/** `<date> <title>.md`: the day the note was created (UTC, YYYY-MM-DD) and its title, made safe for a file name. */
export function markdownFileName(note: FiledNote): string {
  const title = note.title.replace(UNSAFE_IN_FILE_NAME, '-').replace(/\s+/g, ' ').trim().replace(/[. ]+$/, '').slice(0, 120)
  return `${note.dateCreated.slice(0, 10)} ${title || 'Untitled'}.md`
}

interface ActionItem { task: string; owner?: string | null; due?: string | null }

/** The action items of a `meeting-notes` summary, when the note has them. */
function actionItems(note: FiledNote): ActionItem[] {
  const meeting = note.structuredContent?.['meeting-notes']
  if (typeof meeting !== 'object' || meeting === null || !('actionItems' in meeting) || !Array.isArray(meeting.actionItems)) return []
  return meeting.actionItems.filter((item): item is ActionItem => typeof item === 'object' && item !== null && typeof item.task === 'string')
}

export function markdownOf(note: FiledNote): string {
  const lines = [`# ${note.title.trim()}`, '', `_${note.dateCreated}, notesvc note ${note.id}_`, '', note.summary.trim(), '']
  const items = actionItems(note)
  if (items.length) {
    lines.push('## Action items', '')
    for (const item of items) {
      const who = [item.owner, item.due].filter(Boolean).join(', ')
      lines.push(`- [ ] ${item.task}${who ? ` (${who})` : ''}`)
    }
    lines.push('')
  }
  return lines.join('\n')
}
