import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'

// A new installation's first open analyzes an empty search index (2 rows in note_search_data); left
// so, FTS5's own statements read that table in a way that grows with the library, and every note
// write slowed down with it (8 ms at 20,000 notes, 13 ms at 40,000; bench/README.md "search.ts").
// The figure the planner must be given for the index's block table, whatever it held when analyzed:
const PINNED = { tbl: 'note_search_data', idx: null, stat: '1000000' }

const stat = (db: ReturnType<typeof openDatabase>) =>
  db.query<{ tbl: string; idx: string | null; stat: string }, []>("SELECT tbl, idx, stat FROM sqlite_stat1 WHERE tbl = 'note_search_data'").all()

describe('the search index statistics the planner sees', () => {
  test('a new database: the block table is recorded as large, not as the 2 rows it holds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'notesvc-stat-'))
    try {
      const db = openDatabase(join(dir, 'notesvc.db'))
      expect(stat(db)).toEqual([PINNED])
      db.close()
      // opened again (analysis runs at every open): still the pinned figure, once
      const again = openDatabase(join(dir, 'notesvc.db'))
      expect(stat(again)).toEqual([PINNED])
      again.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an in-memory database (the tests) gets the same figure', () => {
    const db = openDatabase(':memory:')
    expect(stat(db)).toEqual([PINNED])
    db.close()
  })
})
