/**
 * A private in-memory SQLite store, as `memoryStore()` (src/db/open.ts) makes it, but copied from a
 * database migrated once per test process instead of migrated again: `openDatabase(':memory:')` runs
 * every migration and analyzes the result (about 15 ms on an idle machine, 100 ms and more on a busy
 * one), a copy takes 2 ms, and some files make a thousand apps (test/http/malformed.test.ts).
 *
 * The copy is the template's image (`serialize`, `Database.deserialize`): the same schema, migration
 * rows and planner statistics. What a connection sets rather than the file holds is read from the
 * template, opened by the real `openDatabase`, and set again on each copy.
 */
import { Database } from 'bun:sqlite'
import { openDatabase } from '../../src/db/database'
import { SqliteStore } from '../../src/db/store'

/** The settings `openDatabase` gives a connection that an image does not carry. */
const CONNECTION_PRAGMAS = ['busy_timeout', 'synchronous', 'foreign_keys', 'cache_size', 'mmap_size'] as const

let template: { image: Uint8Array; pragmas: [string, unknown][] } | null = null

function migratedTemplate() {
  if (template) return template
  const db = openDatabase(':memory:')
  // (an in-memory database answers nothing for mmap_size: nothing to set again)
  const pragmas = CONNECTION_PRAGMAS.flatMap(p => {
    const row = db.query(`PRAGMA ${p}`).get() as Record<string, unknown> | null
    return row ? [[p, Object.values(row)[0]] as [string, unknown]] : []
  })
  template = { image: db.serialize(), pragmas }
  db.close()
  return template
}

/** A new, empty, migrated in-memory SQLite store of its own. */
export function migratedMemoryStore(): SqliteStore {
  const { image, pragmas } = migratedTemplate()
  const db = Database.deserialize(image, { strict: true })
  for (const [name, value] of pragmas) db.exec(`PRAGMA ${name} = ${Number(value)}`)
  return new SqliteStore(db)
}
