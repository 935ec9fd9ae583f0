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

/** The columns a list item carries: everything but the transcript and structured content. */
export type NoteListRow = Omit<NoteRow, 'original_transcription' | 'structured_content' | 'account_id' | 'sandbox' | 'error_code' | 'error_message'>

const LIST_COLUMNS = 'id, folder_id, title, summary, status, processing_stage, type, style_id, language, is_pinned, source, date_created, updated_at'

export interface NoteFilter {
  updatedAfter?: string
  /** a folder id, or null for the top level */
  folderId?: string | null
  status?: string
  type?: string
}

export type NotesRepo = ReturnType<typeof createNotesRepo>

export function createNotesRepo(db: Database) {
  const get = db.query<NoteRow, [string, string, number]>('SELECT * FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?')
  const insert = db.query(`INSERT INTO notes (id, account_id, sandbox, folder_id, title, summary, original_transcription, structured_content, status, processing_stage, type, style_id, language, is_pinned, source, date_created, updated_at)
    VALUES ($id, $account_id, $sandbox, $folder_id, $title, $summary, $original_transcription, $structured_content, $status, $processing_stage, $type, $style_id, $language, $is_pinned, $source, $date_created, $updated_at)`)
  const remove = db.query('DELETE FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?')
  /** One statement per combination of filters (db.query caches each), so each uses its own index. */
  function listStatement(filter: NoteFilter) {
    const where = ['account_id = $account_id', 'sandbox = $sandbox']
    if (filter.folderId === null) where.push('folder_id IS NULL')
    else if (filter.folderId !== undefined) where.push('folder_id = $folder_id')
    if (filter.status !== undefined) where.push('status = $status')
    if (filter.type !== undefined) where.push('type = $type')
    if (filter.updatedAfter !== undefined) where.push('updated_at > $updated_after')
    const sql = `SELECT ${LIST_COLUMNS} FROM notes WHERE ${where.join(' AND ')} ORDER BY date_created DESC, id DESC LIMIT $limit OFFSET $offset`
    return db.query(sql)
  }

  return {
    get: (lib: Library, id: string) => get.get(id, lib.accountId, lib.sandbox ? 1 : 0),
    insert: (row: NoteRow) => { insert.run(row as unknown as Record<string, string | number | null>) },
    /** Reads `limit + 1` rows so the caller can tell whether another page exists. */
    list(lib: Library, filter: NoteFilter, limit: number, offset: number): NoteListRow[] {
      const params: Record<string, string | number> = { account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, limit: limit + 1, offset }
      if (typeof filter.folderId === 'string') params.folder_id = filter.folderId
      if (filter.status !== undefined) params.status = filter.status
      if (filter.type !== undefined) params.type = filter.type
      if (filter.updatedAfter !== undefined) params.updated_after = filter.updatedAfter
      return listStatement(filter).all(params) as NoteListRow[]
    },
    update(lib: Library, id: string, fields: Partial<Pick<NoteRow, 'title' | 'summary' | 'folder_id' | 'is_pinned'>>, updatedAt: string): boolean {
      const sets = Object.keys(fields).map(k => `${k} = $${k}`)
      sets.push('updated_at = $updated_at')
      const stmt = db.query(`UPDATE notes SET ${sets.join(', ')} WHERE id = $id AND account_id = $account_id AND sandbox = $sandbox`)
      return stmt.run({ ...fields, updated_at: updatedAt, id, account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0 } as Record<string, string | number | null>).changes > 0
    },
    /** Writes processing results; only the given columns change. */
    setProcessing(id: string, fields: Partial<Omit<NoteRow, 'id' | 'account_id' | 'sandbox' | 'date_created'>>) {
      const sets = Object.keys(fields).map(k => `${k} = $${k}`)
      db.query(`UPDATE notes SET ${sets.join(', ')} WHERE id = $id`).run({ ...fields, id } as Record<string, string | number | null>)
    },
    delete: (lib: Library, id: string) => remove.run(id, lib.accountId, lib.sandbox ? 1 : 0).changes > 0,
    /** Moves every note of a folder to the top level; part of the folder's deletion transaction. */
    unfileAll(folderId: string, updatedAt: string): number {
      return db.query('UPDATE notes SET folder_id = NULL, updated_at = ? WHERE folder_id = ?').run(updatedAt, folderId).changes
    },
  }
}
