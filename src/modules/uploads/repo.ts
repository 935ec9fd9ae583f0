import type { Database } from '../../db/database'
import type { Library } from '../library'

export interface UploadRow {
  note_id: string
  account_id: string
  sandbox: number
  storage_key: string
  file_name: string
  content_type: string
  declared_size: number | null
  received_size: number | null
  received_at: string | null
  completed_at: string | null
  duration_seconds: number | null
  credits_charged: number
  usage_id: string | null
  source: string
  created_at: string
}

export type UploadsRepo = ReturnType<typeof createUploadsRepo>

export function createUploadsRepo(db: Database) {
  const q = {
    insert: db.query(`INSERT INTO uploads (note_id, account_id, sandbox, storage_key, file_name, content_type, declared_size, source, created_at)
      VALUES ($note_id, $account_id, $sandbox, $storage_key, $file_name, $content_type, $declared_size, $source, $created_at)`),
    get: db.query<UploadRow, [string, string, number]>('SELECT * FROM uploads WHERE note_id = ? AND account_id = ? AND sandbox = ?'),
    byNote: db.query<UploadRow, [string]>('SELECT * FROM uploads WHERE note_id = ?'),
    received: db.query('UPDATE uploads SET received_size = ?, received_at = ? WHERE note_id = ?'),
    complete: db.query('UPDATE uploads SET completed_at = $completed_at, duration_seconds = $duration_seconds, credits_charged = $credits_charged, usage_id = $usage_id WHERE note_id = $note_id AND completed_at IS NULL'),
  }
  return {
    insert: (row: Pick<UploadRow, 'note_id' | 'account_id' | 'sandbox' | 'storage_key' | 'file_name' | 'content_type' | 'declared_size' | 'source' | 'created_at'>) => {
      q.insert.run(row as unknown as Record<string, string | number | null>)
    },
    get: (lib: Library, noteId: string) => q.get.get(noteId, lib.accountId, lib.sandbox ? 1 : 0),
    byNote: (noteId: string) => q.byNote.get(noteId),
    markReceived: (noteId: string, size: number, at: string) => { q.received.run(size, at, noteId) },
    /** true when this call completed it; false when it was already completed */
    markCompleted: (row: { note_id: string; completed_at: string; duration_seconds: number | null; credits_charged: number; usage_id: string | null }) =>
      q.complete.run(row as unknown as Record<string, string | number | null>).changes === 1,
  }
}
