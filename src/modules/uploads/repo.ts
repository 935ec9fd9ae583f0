import type { Store } from '../../db/store'
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
  /** JSON {"exact":n} or {"min":a,"max":b}, for diarization (migration 14); null: the engine estimates */
  speakers_hint?: string | null
}

export type UploadsRepo = ReturnType<typeof createUploadsRepo>

/** PostgreSQL returns BIGINT (the byte counts) as strings. */
const num = (v: number | string | null) => (v === null ? null : Number(v))
const uploadRow = (r: UploadRow | null): UploadRow | null => r && {
  ...r,
  sandbox: Number(r.sandbox),
  declared_size: num(r.declared_size),
  received_size: num(r.received_size),
  duration_seconds: num(r.duration_seconds),
  credits_charged: Number(r.credits_charged),
}

export function createUploadsRepo(store: Store) {
  return {
    insert: async (row: Pick<UploadRow, 'note_id' | 'account_id' | 'sandbox' | 'storage_key' | 'file_name' | 'content_type' | 'declared_size' | 'source' | 'created_at' | 'speakers_hint'>): Promise<void> => {
      await store.run(`INSERT INTO uploads (note_id, account_id, sandbox, storage_key, file_name, content_type, declared_size, source, created_at, speakers_hint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [row.note_id, row.account_id, row.sandbox, row.storage_key, row.file_name, row.content_type, row.declared_size, row.source, row.created_at, row.speakers_hint ?? null])
    },
    get: async (lib: Library, noteId: string): Promise<UploadRow | null> =>
      uploadRow(await store.get<UploadRow>('SELECT * FROM uploads WHERE note_id = ? AND account_id = ? AND sandbox = ?', [noteId, lib.accountId, lib.sandbox ? 1 : 0])),
    /** the upload of a note; `lock`: the row stays locked to the caller's transaction (a read-then-write) */
    byNote: async (noteId: string, o: { lock?: boolean } = {}): Promise<UploadRow | null> =>
      uploadRow(await store.get<UploadRow>(`SELECT * FROM uploads WHERE note_id = ?${o.lock ? store.sql.lock('update') : ''}`, [noteId])),
    /** the media durations (seconds, once completed) of those of the notes that are uploads of the library */
    durations: async (lib: Library, noteIds: string[]): Promise<{ note_id: string; duration_seconds: number | null }[]> => {
      if (noteIds.length === 0) return []
      const rows = await store.all<{ note_id: string; duration_seconds: number | string | null }>(
        `SELECT note_id, duration_seconds FROM uploads WHERE account_id = ? AND sandbox = ? AND note_id IN (${noteIds.map(() => '?').join(', ')})`,
        [lib.accountId, lib.sandbox ? 1 : 0, ...noteIds])
      return rows.map(r => ({ note_id: r.note_id, duration_seconds: num(r.duration_seconds) }))
    },
    markReceived: async (noteId: string, size: number, at: string): Promise<void> => {
      await store.run('UPDATE uploads SET received_size = ?, received_at = ? WHERE note_id = ?', [size, at, noteId])
    },
    /** true when this call completed it; false when it was already completed */
    markCompleted: async (row: { note_id: string; completed_at: string; duration_seconds: number | null; credits_charged: number; usage_id: string | null }): Promise<boolean> =>
      (await store.run('UPDATE uploads SET completed_at = ?, duration_seconds = ?, credits_charged = ?, usage_id = ? WHERE note_id = ? AND completed_at IS NULL',
        [row.completed_at, row.duration_seconds, row.credits_charged, row.usage_id, row.note_id])) === 1,
  }
}
