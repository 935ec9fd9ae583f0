import type { Store } from '../../db/store'
import type { Library } from '../library'

export interface SpeakerProfileRow {
  id: string
  account_id: string
  sandbox: number
  name: string
  engine: string
  embedding: string
  created_at: string
  updated_at: string
}

export type SpeakersRepo = ReturnType<typeof createSpeakersRepo>

/**
 * The voices a library remembers (a note's own speakers are part of its transcript: NotesRepo), the
 * same SQL on both back ends.
 */
export function createSpeakersRepo(store: Store) {
  const sandbox = (lib: Library) => (lib.sandbox ? 1 : 0)
  return {
    /** A page of the library's voices by name (then id): `limit` rows from `offset`. */
    profiles: (lib: Library, limit: number, offset: number) =>
      store.all<SpeakerProfileRow>('SELECT * FROM speaker_profiles WHERE account_id = ? AND sandbox = ? ORDER BY name, id LIMIT ? OFFSET ?', [lib.accountId, sandbox(lib), limit, offset]),

    /** One voice of the library; undefined for another library's or an unknown id. */
    profile: (lib: Library, id: string) =>
      store.get<SpeakerProfileRow>('SELECT * FROM speaker_profiles WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)]),

    /** The voices of a library a new recording's speakers are compared with: those of the same engine. */
    profilesFor: (accountId: string, isSandbox: boolean, engine: string) =>
      store.all<SpeakerProfileRow>('SELECT * FROM speaker_profiles WHERE account_id = ? AND sandbox = ? AND engine = ?', [accountId, isSandbox ? 1 : 0, engine]),

    /**
     * Stores the voice under the name: the print of a voice of that name and engine is replaced, else a
     * new voice is added unless the account (live and sandbox together) already has `max`. Its id, or
     * how many voices the account has when it was full. Inside the caller's transaction; on
     * PostgreSQL one writer at a time per account (a named lock), so two renames at once cannot both
     * take the last place (SQLite has one writer).
     */
    async saveProfileUnder(lib: Library, p: { id: string; name: string; engine: string; embedding: string; at: string }, max: number): Promise<{ saved: true; id: string } | { saved: false; had: number }> {
      if (store.sql.namedLock) await store.get(store.sql.namedLock, [`speaker_profiles:${lib.accountId}`])
      const existing = await store.get<{ id: string }>('SELECT id FROM speaker_profiles WHERE account_id = ? AND sandbox = ? AND engine = ? AND name = ?', [lib.accountId, sandbox(lib), p.engine, p.name])
      if (existing) {
        await store.run('UPDATE speaker_profiles SET embedding = ?, updated_at = ? WHERE id = ?', [p.embedding, p.at, existing.id])
        return { saved: true, id: existing.id }
      }
      const had = Number((await store.get<{ n: number | string }>('SELECT count(*) AS n FROM speaker_profiles WHERE account_id = ?', [lib.accountId]))!.n)
      if (had >= max) return { saved: false, had }
      await store.run('INSERT INTO speaker_profiles (id, account_id, sandbox, name, engine, embedding, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [p.id, lib.accountId, sandbox(lib), p.name, p.engine, p.embedding, p.at, p.at])
      return { saved: true, id: p.id }
    },

    deleteProfile: async (lib: Library, id: string) => (await store.run('DELETE FROM speaker_profiles WHERE id = ? AND account_id = ? AND sandbox = ?', [id, lib.accountId, sandbox(lib)])) > 0,
  }
}
