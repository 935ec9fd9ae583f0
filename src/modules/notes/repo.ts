import type { Database } from '../../db/database'
import type { Library } from '../library'

export interface NoteRow {
  id: string
  account_id: string
  sandbox: number
  folder_id: string | null
  title: string
  summary: string
  original_transcription: string
  structured_content: string | null
  status: 'Done' | 'Summarizing' | 'Error'
  processing_stage: string | null
  type: string
  style_id: string
  language: string | null
  is_pinned: number
  source: string
  error_code: string | null
  error_message: string | null
  date_created: string
  updated_at: string
}

const BODY_COLUMNS = ['original_transcription', 'structured_content'] as const
type BodyColumn = (typeof BODY_COLUMNS)[number]
type Writable = Partial<Omit<NoteRow, 'id' | 'account_id' | 'sandbox' | 'date_created'>>

export interface NoteFilter {
  updatedAfter?: string
  /** a folder id, or null for the top level */
  folderId?: string | null
  status?: string
  type?: string
}

export type NotesRepo = ReturnType<typeof createNotesRepo>

export function createNotesRepo(db: Database) {
  const q = {
    get: db.query<NoteRow, [string, string, number]>(`SELECT n.*, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content
      FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = ? AND n.account_id = ? AND n.sandbox = ?`),
    getById: db.query<NoteRow, [string]>(`SELECT n.*, coalesce(b.original_transcription, '') AS original_transcription, b.structured_content
      FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = ?`),
    insert: db.query(`INSERT INTO notes (id, account_id, sandbox, folder_id, title, summary, status, processing_stage, type, style_id, language, is_pinned, source, error_code, error_message, date_created, updated_at)
      VALUES ($id, $account_id, $sandbox, $folder_id, $title, $summary, $status, $processing_stage, $type, $style_id, $language, $is_pinned, $source, $error_code, $error_message, $date_created, $updated_at)`),
    insertBody: db.query('INSERT INTO note_bodies (note_id, original_transcription, structured_content) VALUES (?, ?, ?)'),
    remove: db.query('DELETE FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?'),
  }

  /** One statement per combination of filters (db.query caches each), so each uses its own index. */
  function listStatement(filter: NoteFilter) {
    const where = ['account_id = $account_id', 'sandbox = $sandbox']
    if (filter.folderId === null) where.push('folder_id IS NULL')
    else if (filter.folderId !== undefined) where.push('folder_id = $folder_id')
    if (filter.status !== undefined) where.push('status = $status')
    if (filter.type !== undefined) where.push('type = $type')
    if (filter.updatedAfter !== undefined) where.push('updated_at > $updated_after')
    return db.query<unknown, Record<string, string | number>>(`SELECT list_item FROM notes WHERE ${where.join(' AND ')} ORDER BY date_created DESC, id DESC LIMIT $limit OFFSET $offset`)
  }

  function updateColumns(table: 'notes' | 'note_bodies', key: 'id' | 'note_id', id: string, fields: Record<string, unknown>) {
    const cols = Object.keys(fields)
    if (cols.length === 0) return
    db.query(`UPDATE ${table} SET ${cols.map(k => `${k} = $${k}`).join(', ')} WHERE ${key} = $__id`)
      .run({ ...fields, __id: id } as Record<string, string | number | null>)
  }

  return {
    get: (lib: Library, id: string) => q.get.get(id, lib.accountId, lib.sandbox ? 1 : 0),
    getById: (id: string) => q.getById.get(id),

    insert(row: NoteRow) {
      db.transaction(() => {
        const { original_transcription, structured_content, ...small } = row
        q.insert.run(small as unknown as Record<string, string | number | null>)
        q.insertBody.run(row.id, original_transcription, structured_content)
      })()
    },

    /**
     * A page of list items as JSON strings, reading `limit + 1` so the caller can tell whether
     * another page exists.
     */
    listJson(lib: Library, filter: NoteFilter, limit: number, offset: number): string[] {
      const params: Record<string, string | number> = { account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, limit: limit + 1, offset }
      if (typeof filter.folderId === 'string') params.folder_id = filter.folderId
      if (filter.status !== undefined) params.status = filter.status
      if (filter.type !== undefined) params.type = filter.type
      if (filter.updatedAfter !== undefined) params.updated_after = filter.updatedAfter
      return listStatement(filter).values(params).map(r => r[0] as string)
    },

    /** Changes the given columns (of either table) of one note; both tables in one transaction. */
    write(id: string, fields: Writable) {
      const body: Record<string, unknown> = {}
      const small: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(fields)) ((BODY_COLUMNS as readonly string[]).includes(k) ? body : small)[k] = v
      db.transaction(() => {
        updateColumns('notes', 'id', id, small)
        updateColumns('note_bodies', 'note_id', id, body as Partial<Record<BodyColumn, unknown>>)
      })()
    },

    delete: (lib: Library, id: string) => q.remove.run(id, lib.accountId, lib.sandbox ? 1 : 0).changes > 0,

    /** Moves every note of a folder to the top level; part of the folder's deletion transaction. */
    unfileAll(folderId: string, updatedAt: string): number {
      return db.query('UPDATE notes SET folder_id = NULL, updated_at = ? WHERE folder_id = ?').run(updatedAt, folderId).changes
    },
  }
}
