import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { migrate } from '../../src/db/database'
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
