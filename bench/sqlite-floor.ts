/**
 * What one cold page of listNotes costs in SQLite alone, on this machine: the floor under the varied
 * benchmark of bench/list-notes.ts. Seeds a library (BENCH_SIZE notes, default 100,000) the same way,
 * then times, inside one read transaction as the repository does, the pieces a page is made of, and
 * compares a 51-row page with the time a bare Bun route takes per request (from bench/list-notes.ts's
 * baseline figure, passed as BASELINE_RPS, default 48,000).
 *
 *   bun run bench/sqlite-floor.ts
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { seedLibrary } from './list-notes'

const size = Number(process.env.BENCH_SIZE ?? 100_000)
const baselineRps = Number(process.env.BASELINE_RPS ?? 48_000)
const dir = mkdtempSync(join(tmpdir(), 'notesvc-floor-'))
try {
  process.stderr.write(`seeding ${size.toLocaleString('en-US')} notes…\n`)
  await seedLibrary(dir, size)
  const db = new Database(join(dir, 'notesvc.db'), { readonly: true })
  db.exec('PRAGMA mmap_size = 1073741824')
  db.exec('PRAGMA cache_size = -65536')
  const account = String(db.query('SELECT account_id FROM notes LIMIT 1').values()[0]![0])
  const keys = db.query<unknown, [string]>('SELECT date_created, id FROM notes INDEXED BY notes_newest WHERE account_id = ? AND sandbox = 0 ORDER BY date_created DESC, id DESC').values(account)
  const from = 'FROM notes INDEXED BY notes_newest WHERE account_id = ?1 AND sandbox = 0 AND (date_created, id) < (?2, ?3) ORDER BY date_created DESC, id DESC'
  const rounds = 20_000
  let i = 0
  const nextKey = () => keys[(i = (i + 7919) % (keys.length - 60))]!
  const time = (sql: string) => {
    const statement = db.prepare<unknown[], [string, string, string]>(sql)
    const run = () => { const k = nextKey(); statement.values(account, String(k[0]), String(k[1])) }
    for (let n = 0; n < 2000; n++) run()
    db.exec('BEGIN')
    const start = performance.now()
    for (let n = 0; n < rounds; n++) run()
    const us = ((performance.now() - start) / rounds) * 1000
    db.exec('COMMIT')
    return us
  }
  const rows: [string, number][] = [
    ['SELECT 1 (the cost of a call)', time('SELECT ?1, ?2, ?3')],
    ['seek to a key, 1 row from the index', time(`SELECT id ${from} LIMIT 1`)],
    ['seek, 51 keys from the index', time(`SELECT id ${from} LIMIT 51`)],
    ['seek, 51 list items (index + table)', time(`SELECT list_item ${from} LIMIT 51`)],
  ]
  const page = rows[3]![1]
  const budget = (1e6 / baselineRps) * (1 / 0.3 - 1)
  process.stdout.write(`\nN=${size.toLocaleString('en-US')} notes, inside one read transaction, ${rounds.toLocaleString('en-US')} random positions each\n`)
  for (const [name, us] of rows) process.stdout.write(`${name.padEnd(40)} ${us.toFixed(1).padStart(7)} µs\n`)
  process.stdout.write(`\nbaseline ${baselineRps.toLocaleString('en-US')} req/s = ${(1e6 / baselineRps).toFixed(1)} µs a request; 0.3x of it leaves ${budget.toFixed(1)} µs a request for everything else\n`)
  process.stdout.write(`one cold 51-row page in SQLite alone: ${page.toFixed(1)} µs = ${(page / budget).toFixed(2)}x that budget\n`)
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
