import type { Store } from '../../db/store'

export interface RevisionRow {
  note_id: string
  version: number
  actor_type: string | null
  actor_id: string | null
  operation: string
  created_at: string
  /** the version a restore brought back; null for any other edit (migration 25) */
  restored_from: number | null
  /** JSON: the transcript at this version (text, segments, speakers) when kept whole (a snapshot); else null */
  transcript: string | null
  /** JSON: what the edit changed from the version before (revision-changes.ts), when not a snapshot (migration 26) */
  changes: string | null
}

/** A revision without what it keeps of the transcript. */
export type RevisionSummaryRow = Omit<RevisionRow, 'transcript' | 'changes'>

export type RevisionsRepo = ReturnType<typeof createRevisionsRepo>

const SUMMARY_COLUMNS = 'note_id, version, actor_type, actor_id, operation, created_at, restored_from'

/** The versions of notes' transcripts (migrations 22, 25, 26), the same SQL on both back ends. */
export function createRevisionsRepo(store: Store) {
  return {
    /**
     * The note's transcript version raised by one, and the new one (null: no such note in the
     * library): the first write of an edit's transaction, so it holds the note's row (PostgreSQL)
     * until the edit commits and a second edit waits for it, then reads what the first saved (SQLite
     * has one writer).
     */
    async nextVersion(noteId: string, accountId: string, sandbox: boolean): Promise<number | null> {
      const where = 'WHERE id = ? AND account_id = ? AND sandbox = ?'
      const key = [noteId, accountId, sandbox ? 1 : 0]
      if (!(await store.run(`UPDATE notes SET transcript_version = transcript_version + 1 ${where}`, key))) return null
      return Number((await store.get<{ v: number | string }>(`SELECT transcript_version AS v FROM notes ${where}`, key))!.v)
    },

    insert: (r: RevisionRow) =>
      store.run('INSERT INTO transcript_revisions (note_id, version, actor_type, actor_id, operation, created_at, restored_from, transcript, changes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [r.note_id, r.version, r.actor_type, r.actor_id, r.operation, r.created_at, r.restored_from, r.transcript, r.changes]),

    /** The note's revisions, newest first, without their transcripts. */
    list: (noteId: string) =>
      store.all<RevisionSummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM transcript_revisions WHERE note_id = ? ORDER BY version DESC`, [noteId]),

    get: (noteId: string, version: number) =>
      store.get<RevisionSummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM transcript_revisions WHERE note_id = ? AND version = ?`, [noteId, version]),

    /**
     * What rebuilds version `version`'s transcript: the nearest snapshot at or before it, then every
     * change after it up to `version`, in order (revision-changes.ts `replay`).
     */
    chain: (noteId: string, version: number) =>
      store.all<{ transcript: string | null; changes: string | null }>(`SELECT transcript, changes FROM transcript_revisions
        WHERE note_id = ? AND version <= ? AND version >= (SELECT max(version) FROM transcript_revisions WHERE note_id = ? AND version <= ? AND transcript IS NOT NULL)
        ORDER BY version`, [noteId, version, noteId, version]),
  }
}
