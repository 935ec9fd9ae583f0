import type { Store } from '../../db/store'
import type { Library } from '../library'

export interface FolderRow {
  id: string
  account_id: string
  sandbox: number
  name: string
  color: string | null
  created_at: string
  updated_at: string
}

export type FoldersRepo = ReturnType<typeof createFoldersRepo>

export function createFoldersRepo(store: Store) {
  // by name without regard to ASCII case, then id (read off folders_by_name, built the same way)
  const byName = `${store.sql.caseless('name')}, id`
  const lib = (l: Library): [string, number] => [l.accountId, l.sandbox ? 1 : 0]
  return {
    /**
     * The folder, or null. `lock`: inside a transaction, hold the row until it ends (where the database
     * locks rows: `store.sql.lock`): `update` locks it against a concurrent change or deletion, `share`
     * against deletion only (a note being filed in it).
     */
    get: (l: Library, id: string, lock: 'update' | 'share' | null = null) =>
      store.get<FolderRow>(`SELECT * FROM folders WHERE id = ? AND account_id = ? AND sandbox = ?${lock ? store.sql.lock(lock) : ''}`, [id, ...lib(l)]),
    list: (l: Library) => store.all<FolderRow>(`SELECT * FROM folders WHERE account_id = ? AND sandbox = ? ORDER BY ${byName}`, lib(l)),
    insert: async (row: FolderRow) => {
      await store.run('INSERT INTO folders (id, account_id, sandbox, name, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [row.id, row.account_id, row.sandbox, row.name, row.color, row.created_at, row.updated_at])
    },
    async update(l: Library, id: string, fields: Partial<Pick<FolderRow, 'name' | 'color'>>, updatedAt: string) {
      const cols = Object.keys(fields) as (keyof typeof fields)[]
      const sets = [...cols.map(k => `${k} = ?`), 'updated_at = ?']
      await store.run(`UPDATE folders SET ${sets.join(', ')} WHERE id = ? AND account_id = ? AND sandbox = ?`,
        [...cols.map(k => fields[k] ?? null), updatedAt, id, ...lib(l)])
    },
    delete: async (l: Library, id: string) => (await store.run('DELETE FROM folders WHERE id = ? AND account_id = ? AND sandbox = ?', [id, ...lib(l)])) > 0,
  }
}
