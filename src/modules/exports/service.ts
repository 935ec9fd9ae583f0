import { NOTE_DOCX_CONTENT_TYPE, NOTE_MARKDOWN_CONTENT_TYPE, type ExportableNote } from '../../formats/note-outline'
import type { AuditBy } from '../audit/model'
import type { AuditService } from '../audit/service'
import type { Library } from '../library'
import type { NotesService } from '../notes/service'
import type { NoteExportFormat } from './model'

/**
 * The two writers, loaded on the first export, not at start-up: `docx` and the mdast writers cost
 * about 60 ms of a start to load (bench/cold-start.ts), and most processes never export.
 */
const writers = {
  markdown: () => import('../../formats/note-markdown'),
  docx: () => import('../../formats/note-docx'),
}

/** A note's export: the file, its media type and extension, and the title its name is made from. */
export interface NoteExportFile {
  body: string | Uint8Array
  contentType: string
  extension: NoteExportFormat
  title: string
}

export type NoteExportService = ReturnType<typeof createNoteExportService>

/**
 * A note exported as Markdown or DOCX (src/formats/note-*.ts), read as its transcript is: 404 for a
 * note not of the library, 409 while it is processing (or when it failed before it had a transcript),
 * and recorded in the audit log as a transcript export (the file holds the transcript).
 */
export function createNoteExportService(deps: {
  notes: Pick<NotesService, 'readableTranscript' | 'namedSegmentsOf'>
  /** the file name the note's recording was uploaded as, null for a note without one */
  fileNameOf: (noteId: string) => Promise<string | null>
  audit?: Pick<AuditService, 'recordBy'>
}) {
  async function exportable(lib: Library, id: string): Promise<ExportableNote> {
    const row = await deps.notes.readableTranscript(lib, id)
    // segments with the names shown as their speakers, so each name is its own label
    const segments = await deps.notes.namedSegmentsOf(row)
    const names = [...new Set((segments ?? []).flatMap(s => (s.speaker ? [s.speaker] : [])))]
    return {
      title: row.title,
      fileName: await deps.fileNameOf(row.id),
      dateCreated: row.date_created,
      styleId: row.style_id,
      summary: row.summary,
      summaryStale: row.summary_stale === 1,
      structuredContent: row.structured_content === null ? null : (JSON.parse(row.structured_content) as Record<string, unknown>),
      speakers: names.map(name => ({ id: name, name })),
      segments,
      transcript: row.original_transcription,
      tags: row.tags ? (JSON.parse(row.tags) as { name: string }[]).map(t => t.name) : [],
    }
  }

  return {
    async exportNote(lib: Library, id: string, format: NoteExportFormat, by: AuditBy): Promise<NoteExportFile> {
      const note = await exportable(lib, id)
      const file = format === 'md'
        ? { body: (await writers.markdown()).noteToMarkdown(note), contentType: NOTE_MARKDOWN_CONTENT_TYPE }
        : { body: await (await writers.docx()).noteToDocx(note), contentType: NOTE_DOCX_CONTENT_TYPE }
      await deps.audit?.recordBy(by, { accountId: lib.accountId, action: 'note.transcript_exported', target: { type: 'note', id }, details: { format, sandbox: lib.sandbox } })
      return { ...file, extension: format, title: note.title }
    },
  }
}
