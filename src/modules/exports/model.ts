import { t } from 'elysia'

/** The files a note exports to: Markdown and Word. */
const NOTE_EXPORT_FORMATS = ['md', 'docx'] as const
export type NoteExportFormat = (typeof NOTE_EXPORT_FORMATS)[number]

export const NoteExportQuery = t.Object({
  format: t.Union(NOTE_EXPORT_FORMATS.map(f => t.Literal(f)), {
    description: '`md` (Markdown, text/markdown) or `docx` (a Word document)',
    error: `must be one of ${NOTE_EXPORT_FORMATS.join(', ')}`,
  }),
})

/** What the export answers: the file itself, not JSON (the operation's `fileResponses`). */
export const NoteExport = t.String({
  title: 'NoteExport',
  description: 'The note as a file: its title, date, file name and speakers, the summary as its style structures it (meeting notes with attendees, decisions and a table of action items), and the transcript by speaker turns with times.',
})
