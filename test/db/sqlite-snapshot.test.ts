import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { migrate, openDatabase } from '../../src/db/database'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/process'
import { MIGRATIONS } from '../../src/db/migrations'

/** Everything a database holds that a migration decides: its objects and the rows of its tables. */
function contents(db: Database) {
  const objects = db.query<{ type: string; name: string; tbl_name: string; sql: string | null }, []>("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_stat%' ORDER BY type, name").all()
  const tables = objects.filter(o => o.type === 'table').map(o => o.name)
  const rows = Object.fromEntries(tables.map(t => [t, db.query(`SELECT * FROM "${t}"`).all().map(r => ({ ...(r as object), applied_at: undefined }))]))
  return { objects, rows }
}

test('a new database made from the schema snapshot is the one the migrations make step by step', () => {
  const fromSnapshot = new Database(':memory:')
  expect(migrate(fromSnapshot)).toBe(MIGRATIONS.length)
  // copies of the migrations are not the shipped ones: migrate runs them one by one
  const stepByStep = new Database(':memory:')
  expect(migrate(stepByStep, MIGRATIONS.map(m => ({ ...m })))).toBe(MIGRATIONS.length)
  const a = contents(fromSnapshot)
  const b = contents(stepByStep)
  expect(a.objects.map(o => o.name)).toContain('note_search')
  expect(a).toEqual(b)
  // both are at the latest version: nothing left to run
  for (const db of [fromSnapshot, stepByStep]) expect(migrate(db)).toBe(0)
})

test('a new database file is written from the image of the migrated schema: the same objects and rows, every version stamped now', () => {
  const d = tempDir()
  try {
    const before = Date.now()
    const fromImage = openDatabase(join(d.path, 'new.db'))
    const stepByStep = new Database(':memory:')
    migrate(stepByStep, MIGRATIONS.map(m => ({ ...m })))
    expect(contents(fromImage)).toEqual(contents(stepByStep))
    const stamps = fromImage.query<{ applied_at: string }, []>('SELECT applied_at FROM schema_migrations').all().map(r => Date.parse(r.applied_at))
    expect(stamps).toHaveLength(MIGRATIONS.length)
    for (const t of stamps) expect(t).toBeGreaterThanOrEqual(before - 1000)
    expect(fromImage.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()!.journal_mode).toBe('wal')
    // no file of the making is left beside it
    expect(readdirSync(d.path).filter(f => f.endsWith('.new'))).toEqual([])
    // opened again, nothing to migrate and nothing remade
    fromImage.close()
    const again = openDatabase(join(d.path, 'new.db'))
    expect(migrate(again)).toBe(0)
    again.close()
  } finally {
    d.remove()
  }
})
