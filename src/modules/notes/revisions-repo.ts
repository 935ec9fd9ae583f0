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
  /** JSON: the transcript at this version (text, segments, speakers) */
  transcript: string
}

export type RevisionsRepo = ReturnType<typeof createRevisionsRepo>

/** The versions of notes' transcripts (migration 22), the same SQL on both back ends. */
export function createRevisionsRepo(store: Store) {
  return {
    /**
     * The note's transcript version raised by one, and the new one: the first write of an edit's
     * transaction, so it holds the note's row (PostgreSQL) until the edit commits and a second edit
     * waits for it, then reads what the first saved (SQLite has one writer).
     */
    async nextVersion(noteId: string): Promise<number> {
      await store.run('UPDATE notes SET transcript_version = transcript_version + 1 WHERE id = ?', [noteId])
      return Number((await store.get<{ v: number | string }>('SELECT transcript_version AS v FROM notes WHERE id = ?', [noteId]))!.v)
    },

    insert: (r: RevisionRow) =>
      store.run('INSERT INTO transcript_revisions (note_id, version, actor_type, actor_id, operation, created_at, restored_from, transcript) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [r.note_id, r.version, r.actor_type, r.actor_id, r.operation, r.created_at, r.restored_from, r.transcript]),

    /** The note's revisions, newest first, without their transcripts. */
    list: (noteId: string) =>
      store.all<Omit<RevisionRow, 'transcript'>>('SELECT note_id, version, actor_type, actor_id, operation, created_at, restored_from FROM transcript_revisions WHERE note_id = ? ORDER BY version DESC', [noteId]),

    get: (noteId: string, version: number) =>
      store.get<RevisionRow>('SELECT * FROM transcript_revisions WHERE note_id = ? AND version = ?', [noteId, version]),
  }
}
