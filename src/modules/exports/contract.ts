import { Answer } from '../../http/answer'
import { operationDefiner } from '../../http/contract'
import { attachment } from '../../http/download'
import { IdParams } from '../../http/schemas'
import { NOTE_DOCX_CONTENT_TYPE } from '../../formats/note-outline'
import { auditBy } from '../audit/by'
import { NoteExport, NoteExportQuery } from './model'
import type { NoteExportService } from './service'

const defineOperation = operationDefiner<{ exports: NoteExportService }>()

const exportNote = defineOperation({
  id: 'exportNote', method: 'GET', path: '/v1/notes/:id/export', tag: 'Notes',
  summary: 'Export a note as Markdown or DOCX',
  description: 'The note as a file to keep or share: `format=md` (text/markdown) or `format=docx` (a Word document), with a `Content-Disposition` file name from the note\'s title. Its title, date, file name and speakers; the summary as its style structures it (meeting notes: attendees, decisions and a table of action items with owners and dues), with a line saying so when the transcript changed after the summary was made; then the transcript by speaker turns with their times. 409 while the note is still processing. Over MCP the file comes as `content` (Markdown) or `contentBase64` (DOCX).',
  scopes: ['notes:read'], credits: 0,
  params: IdParams,
  query: NoteExportQuery,
  responses: { 200: NoteExport },
  fileResponses: ['text/markdown', NOTE_DOCX_CONTENT_TYPE],
  errors: ['not_found', 'conflict'],
}, async ({ id, format }, caller, { exports }) => {
  const file = await exports.exportNote(caller.principal, id, format, auditBy(caller))
  return new Answer(file.body, { contentType: file.contentType, headers: { 'content-disposition': attachment(file.title, file.extension, id) }, textFields: { noteId: id, format } })
})

export const exportsOperations = [exportNote] as const
