import type { Database } from '../../db/database'
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

export function createFoldersRepo(db: Database) {
  const q = {
    get: db.query<FolderRow, [string, string, number]>('SELECT * FROM folders WHERE id = ? AND account_id = ? AND sandbox = ?'),
    list: db.query<FolderRow, [string, number]>('SELECT * FROM folders WHERE account_id = ? AND sandbox = ? ORDER BY name COLLATE NOCASE, id'),
    insert: db.query('INSERT INTO folders (id, account_id, sandbox, name, color, created_at, updated_at) VALUES ($id, $account_id, $sandbox, $name, $color, $created_at, $updated_at)'),
    delete: db.query('DELETE FROM folders WHERE id = ? AND account_id = ? AND sandbox = ?'),
  }
  const lib = (l: Library): [string, number] => [l.accountId, l.sandbox ? 1 : 0]
  return {
    get: (l: Library, id: string) => q.get.get(id, ...lib(l)),
    list: (l: Library) => q.list.all(...lib(l)),
    insert: (row: FolderRow) => { q.insert.run(row as unknown as Record<string, string | number | null>) },
    update(l: Library, id: string, fields: Partial<Pick<FolderRow, 'name' | 'color'>>, updatedAt: string) {
      const sets = [...Object.keys(fields).map(k => `${k} = $${k}`), 'updated_at = $updated_at']
      db.query(`UPDATE folders SET ${sets.join(', ')} WHERE id = $id AND account_id = $account_id AND sandbox = $sandbox`)
        .run({ ...fields, updated_at: updatedAt, id, account_id: l.accountId, sandbox: l.sandbox ? 1 : 0 } as Record<string, string | number | null>)
    },
    delete: (l: Library, id: string) => q.delete.run(id, ...lib(l)).changes > 0,
  }
}
