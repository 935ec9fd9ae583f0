import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { migrate, openDatabase } from '../../src/db/database'
import { MIGRATIONS } from '../../src/db/migrations'
import { tempDir } from '../helpers/process'

describe('database', () => {
  test('a file database runs in WAL mode with foreign keys and a busy timeout', () => {
    const d = tempDir()
    try {
      const db = openDatabase(join(d.path, 'nested', 'n.db'))
      expect(db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode).toBe('wal')
      expect(db.query<{ foreign_keys: number }, []>('PRAGMA foreign_keys').get()!.foreign_keys).toBe(1)
      expect(db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()!.timeout).toBe(5000)
      db.close()
    } finally {
      d.remove()
    }
  })

  test('migrations run once, in order, and again is a no-op', () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'n.db')
      const db = openDatabase(path)
      const versions = db.query<{ version: number }, []>('SELECT version FROM schema_migrations ORDER BY version').all().map(r => r.version)
      expect(versions).toEqual(MIGRATIONS.map(m => m.version))
      expect(migrate(db)).toBe(0)
      db.close()
      const again = openDatabase(path)
      expect(migrate(again)).toBe(0)
      again.close()
    } finally {
      d.remove()
    }
  })

  test('a failing migration leaves the schema as it was', () => {
    const db = openDatabase(':memory:')
    const bad = [...MIGRATIONS, { version: 999, name: 'broken', sql: 'CREATE TABLE half (x INTEGER); SELECT * FROM no_such_table;' }]
    expect(() => migrate(db, bad)).toThrow()
    expect(db.query('SELECT name FROM sqlite_master WHERE name = ?').get('half')).toBeNull()
    expect(db.query<{ v: number }, []>('SELECT max(version) AS v FROM schema_migrations').get()!.v).toBe(MIGRATIONS.at(-1)!.version)
  })

  test('pending migrations apply together: a failing one leaves the earlier pending ones unapplied too', () => {
    const db = openDatabase(':memory:', MIGRATIONS.slice(0, 3))
    const bad = [...MIGRATIONS, { version: 999, name: 'broken', sql: 'SELECT * FROM no_such_table;' }]
    expect(() => migrate(db, bad)).toThrow()
    expect(db.query<{ v: number }, []>('SELECT max(version) AS v FROM schema_migrations').get()!.v).toBe(3)
    expect(migrate(db)).toBe(MIGRATIONS.length - 3)
  })

  test('a database from a newer build is refused with a clear message', () => {
    const db = openDatabase(':memory:')
    db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (1000, ?, ?)').run('future', new Date().toISOString())
    expect(() => migrate(db)).toThrow(/newer than this build knows/)
  })

  test('listing reads an index, not the whole table', () => {
    const db = openDatabase(':memory:')
    const plan = db.query<{ detail: string }, []>("EXPLAIN QUERY PLAN SELECT id FROM notes WHERE account_id = 'a' AND sandbox = 0 ORDER BY date_created DESC, id DESC LIMIT 51").all().map(r => r.detail).join(' | ')
    expect(plan).toMatch(/USING (COVERING )?INDEX notes_newest/)
    expect(plan).not.toContain('TEMP B-TREE')
    const byFolder = db.query<{ detail: string }, []>("EXPLAIN QUERY PLAN SELECT id FROM notes WHERE account_id = 'a' AND sandbox = 0 AND folder_id = 'f' ORDER BY date_created DESC, id DESC LIMIT 51").all().map(r => r.detail).join(' | ')
    expect(byFolder).not.toContain('TEMP B-TREE')
  })
})
