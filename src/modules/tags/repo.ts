import type { Store } from '../../db/store'
import type { Library } from '../library'
import type { NoteTag } from './model'

export interface TagRow {
  id: string
  account_id: string
  sandbox: number
  name: string
  name_key: string
  color: string
  created_at: string
}

export type TagsRepo = ReturnType<typeof createTagsRepo>

/** Tags and the notes carrying them, scoped by the library (account + sandbox) as the notes are. */
export function createTagsRepo(store: Store) {
  const lib = (l: Library): [string, number] => [l.accountId, l.sandbox ? 1 : 0]
  const notBeforeCreation = store.sql.greatest('?', 'date_created')

  /** The note's tags as notes.tags holds them (JSON by name, null for none), made from note_tags. */
  async function noteTagsJson(noteId: string): Promise<string | null> {
    const rows = await store.all<NoteTag>('SELECT t.id, t.name, t.color FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ? ORDER BY t.name_key, t.id', [noteId])
    return rows.length ? JSON.stringify(rows.map(r => ({ id: r.id, name: r.name, color: r.color }))) : null
  }

  return {
    /**
     * The tag, or null. `lock`: inside a transaction, hold the row (FOR UPDATE, where the database
     * locks rows) until it ends: an add of this tag to another note (whose foreign key check shares
     * the row) waits, or is waited for, so a rename or deletion sees every note carrying the tag.
     */
    get: (l: Library, id: string, lock = false) => store.get<TagRow>(`SELECT * FROM tags WHERE id = ? AND account_id = ? AND sandbox = ?${lock ? store.sql.lock('update') : ''}`, [id, ...lib(l)]),
    byKey: (l: Library, key: string) => store.get<TagRow>('SELECT * FROM tags WHERE account_id = ? AND sandbox = ? AND name_key = ?', [...lib(l), key]),
    list: (l: Library) => store.all<TagRow>('SELECT * FROM tags WHERE account_id = ? AND sandbox = ? ORDER BY name_key, id', lib(l)),
    /** Inserts the tag unless the library has one of its name already (a concurrent insert included); true when inserted. */
    insert: async (row: TagRow) => (await store.run(`INSERT INTO tags (id, account_id, sandbox, name, name_key, color, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (account_id, sandbox, name_key) DO NOTHING`, [row.id, row.account_id, row.sandbox, row.name, row.name_key, row.color, row.created_at])) > 0,
    update: (l: Library, id: string, fields: Pick<TagRow, 'name' | 'name_key' | 'color'>) =>
      store.run('UPDATE tags SET name = ?, name_key = ?, color = ? WHERE id = ? AND account_id = ? AND sandbox = ?', [fields.name, fields.name_key, fields.color, id, ...lib(l)]),
    delete: async (l: Library, id: string) => (await store.run('DELETE FROM tags WHERE id = ? AND account_id = ? AND sandbox = ?', [id, ...lib(l)])) > 0,

    /** The note (of this library) locked against a concurrent change of its tags until the transaction ends, with its structured content; null when not there. */
    lockNote: (l: Library, noteId: string) => store.get<{ id: string; structured_content: string | null }>(
      `SELECT n.id, b.structured_content FROM notes n LEFT JOIN note_bodies b ON b.note_id = n.id WHERE n.id = ? AND n.account_id = ? AND n.sandbox = ?${store.sql.lock('update').replace('FOR UPDATE', 'FOR UPDATE OF n')}`, [noteId, ...lib(l)]),
    tagsOf: (noteId: string) => store.all<TagRow>('SELECT t.* FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = ? ORDER BY t.name_key, t.id', [noteId]),
    notesWith: async (tagId: string) => (await store.all<{ note_id: string }>('SELECT note_id FROM note_tags WHERE tag_id = ?', [tagId])).map(r => r.note_id),
    attach: (noteId: string, tagId: string) => store.run('INSERT INTO note_tags (note_id, tag_id, date_created) SELECT id, ?, date_created FROM notes WHERE id = ? ON CONFLICT DO NOTHING', [tagId, noteId]),
    detach: (noteId: string, tagId: string) => store.run('DELETE FROM note_tags WHERE note_id = ? AND tag_id = ?', [noteId, tagId]),
    detachAll: (noteId: string) => store.run('DELETE FROM note_tags WHERE note_id = ?', [noteId]),

    /**
     * notes.tags made again from note_tags for each note, and the note marked changed `at` (its
     * revision moves: kept list pages and items are read again); inside the caller's transaction.
     * Each note's row is locked before its tags are read (where the database locks rows), in id order:
     * a concurrent add to the same note (which locks it first too) is then either wholly before or
     * wholly after, never read half-way into a stale JSON, and two such writers never wait in a cycle.
     */
    async refreshNotes(noteIds: readonly string[], at: string) {
      for (const id of [...noteIds].sort()) {
        await store.get(`SELECT id FROM notes WHERE id = ?${store.sql.lock('update')}`, [id])
        await store.run(`UPDATE notes SET tags = ?, updated_at = ${notBeforeCreation} WHERE id = ?`, [await noteTagsJson(id), at, id])
      }
    },
  }
}
