import type { Store } from '../../db/store'
import type { Library } from '../library'

export interface NoteShareRow {
  id: string
  note_id: string
  account_id: string
  sandbox: number
  token_hash: string
  show_summary: number
  show_speakers: number
  show_recording: number
  /** comma-separated formats (SHARE_FORMATS), '' for none */
  formats: string
  expires_at: string | null
  passphrase_hash: string | null
  created_at: string
  revoked_at: string | null
  open_count: number | string
  last_opened_at: string | null
  /** the team member who made it (migration 34); null in a personal workspace and before */
  made_by?: string | null
}

export type SharesRepo = ReturnType<typeof createSharesRepo>

/** The SQL of note_shares (migration 29). */
export function createSharesRepo(store: Store) {
  const lib = (l: Library): [string, number] => [l.accountId, l.sandbox ? 1 : 0]
  return {
    insert: async (r: NoteShareRow) => {
      await store.run(
        `INSERT INTO note_shares (id, note_id, account_id, sandbox, token_hash, show_summary, show_speakers, show_recording, formats, expires_at, passphrase_hash, created_at, revoked_at, open_count, last_opened_at, made_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, NULL, ?)`,
        [r.id, r.note_id, r.account_id, r.sandbox, r.token_hash, r.show_summary, r.show_speakers, r.show_recording, r.formats, r.expires_at, r.passphrase_hash, r.created_at, r.made_by ?? null],
      )
    },
    listOfNote: (l: Library, noteId: string) =>
      store.all<NoteShareRow>('SELECT * FROM note_shares WHERE note_id = ? AND account_id = ? AND sandbox = ? ORDER BY created_at DESC, id DESC', [noteId, ...lib(l)]),
    get: (l: Library, noteId: string, id: string) =>
      store.get<NoteShareRow>('SELECT * FROM note_shares WHERE id = ? AND note_id = ? AND account_id = ? AND sandbox = ?', [id, noteId, ...lib(l)]),
    /** Marks the link revoked (once: a second revocation keeps the first time); whether the row exists. */
    revoke: async (l: Library, noteId: string, id: string, at: string) =>
      (await store.run('UPDATE note_shares SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND note_id = ? AND account_id = ? AND sandbox = ?', [at, id, noteId, ...lib(l)])) > 0,
    /**
     * The note's revision (migration 5: a new one on every change of its row, its transcript, speakers,
     * summary, status and recording's removal included), or null when the library has no such note.
     */
    noteRevision: async (l: Library, noteId: string) => {
      const r = await store.get<{ revision: number | string }>('SELECT revision FROM notes WHERE id = ? AND account_id = ? AND sandbox = ?', [noteId, ...lib(l)])
      return r ? Number(r.revision) : null
    },
    byTokenHash: (hash: string) => store.get<NoteShareRow>('SELECT * FROM note_shares WHERE token_hash = ?', [hash]),
    /** Adds `n` openings, the last at `at` (a later write never moves it back). */
    countOpened: async (id: string, n: number, at: string) => {
      await store.run('UPDATE note_shares SET open_count = open_count + ?, last_opened_at = CASE WHEN last_opened_at IS NULL OR last_opened_at < ? THEN ? ELSE last_opened_at END WHERE id = ?', [n, at, at, id])
    },
  }
}
