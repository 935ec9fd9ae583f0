import { Database } from 'bun:sqlite'
import { existsSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { MIGRATIONS, SCHEMA_MIGRATIONS_TABLE } from './migrations'
import { sqliteImage, sqliteSnapshot } from './sqlite-snapshot' with { type: 'macro' }
import { startupMark } from '../startup-timing'

export type { Database }

const MMAP_BYTES = 1024 * 1024 * 1024
const CACHE_KIB = 64 * 1024

/**
 * Opens (creating if needed) the database with the pragmas every connection needs, then brings its
 * schema up to date. `:memory:` gives a private database, for tests.
 */
export function openDatabase(path: string, migrations = MIGRATIONS): Database {
  let made = false
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true })
    if (migrations === MIGRATIONS) made = madeFromImage(path)
  }
  const db = new Database(path, { create: true, strict: true })
  // The busy timeout first: switching to WAL, the first reads and the analysis below can meet another
  // process's lock, and before it is set such a meeting is an immediate SQLITE_BUSY.
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  // Reads of a large library touch pages all over its indexes: map the file (no read() call per page)
  // and keep up to 64 MB of pages in SQLite's own cache rather than the default 2 MB.
  db.exec(`PRAGMA mmap_size = ${MMAP_BYTES}`)
  db.exec(`PRAGMA cache_size = -${CACHE_KIB}`)
  startupMark('database: open and pragmas')
  if (made) db.query('UPDATE schema_migrations SET applied_at = ?').run(new Date().toISOString())
  migrate(db, migrations)
  startupMark('database: migrations')
  keepStatisticsCurrent(db, path)
  startupMark('database: planner statistics')
  return db
}

const OPTIMIZE_EVERY_MS = 60 * 60 * 1000

/**
 * A database file that does not exist yet written from the image of a migrated one (sqlite-snapshot.ts,
 * made when the code is built): to a name of this process, then linked to `path`, which fails if
 * another process (a worker started beside serve) made it meanwhile; then theirs is used. True when this
 * call made it. The migrations then find every version recorded and run nothing.
 */
function madeFromImage(path: string): boolean {
  if (existsSync(path)) return false
  const tmp = `${path}.${process.pid}.new`
  writeFileSync(tmp, Bun.gunzipSync(Buffer.from(sqliteImage(), 'base64')))
  try {
    linkSync(tmp, path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  } finally {
    rmSync(tmp, { force: true })
  }
}

/**
 * The query planner's statistics, as SQLite recommends for long-lived connections: `PRAGMA
 * optimize=0x10002` at open (analyzes what needs it, with a bounded cost), then `PRAGMA optimize`
 * every hour. The list queries name their indexes and do not depend on it; other queries do.
 * Each time, the statistics of full-text indexes' block tables are pinned (`pinFullTextStatistics`).
 */
function keepStatisticsCurrent(db: Database, path: string): void {
  const optimize = (pragma: string) => {
    db.exec(pragma)
    pinFullTextStatistics(db)
  }
  optimize('PRAGMA optimize=0x10002')
  if (path === ':memory:') return
  const timer = setInterval(() => {
    try {
      optimize('PRAGMA optimize')
    } catch {
      clearInterval(timer) // closed
    }
  }, OPTIMIZE_EVERY_MS)
  timer.unref?.()
}

/** What the planner is told an FTS5 index's `_data` table holds, whatever its size when analyzed. */
const FTS_DATA_ROWS_STAT = '1000000'

/**
 * An FTS5 index keeps its blocks in a shadow table `<name>_data`. Analyzed while the index is small
 * (a new installation: `PRAGMA optimize` at the first open sees 2 rows), the statistics say the table
 * is tiny, and FTS5's own statements then read it in a way whose cost grows with the index: measured
 * at 20,000 notes, one note write went from 0.4 ms to 8 ms, at 40,000 to 13 ms (it was linear in the
 * library; docs/decisions.md "Searching notes"). So after every analysis the row count recorded for
 * each such table is replaced by a large fixed figure and the statistics are reloaded.
 */
function pinFullTextStatistics(db: Database): void {
  const analyzed = db.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'sqlite_stat1'").get()!.n > 0
  if (!analyzed) return
  const tables = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'")
    .all()
    .map(t => `${t.name}_data`)
  if (tables.length === 0) return
  const pin = db.transaction(() => {
    for (const table of tables) {
      db.run('DELETE FROM sqlite_stat1 WHERE tbl = ?', [table])
      db.run('INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, NULL, ?)', [table, FTS_DATA_ROWS_STAT])
    }
  })
  pin.immediate()
  db.exec('ANALYZE sqlite_schema') // reloads the statistics into the planner
}

/** The schema version of an opened database: the highest migration applied, or null before the first. */
export function schemaVersion(db: Database): number | null {
  return db.query<{ v: number | null }, []>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? null
}

/** A database some newer build has migrated: this one does not know its schema. */
export function newerSchemaError(current: number, latest: number): Error {
  return new Error(`the database is at schema version ${current}, newer than this build knows (${latest}); run a newer notesvc or restore a backup`)
}

/**
 * Applies the pending migrations in one immediate transaction: all of them or none, and the version
 * read under the write lock, so two processes starting together migrate once. (Not faster than one
 * commit per migration: in WAL mode with synchronous=NORMAL a commit does not sync; a fresh
 * database's 14 migrations take about 13 ms either way, the statements themselves.)
 */
export function migrate(db: Database, migrations = MIGRATIONS): number {
  db.exec(SCHEMA_MIGRATIONS_TABLE)
  const latest = Math.max(0, ...migrations.map(m => m.version))
  const pending = () => {
    const current = schemaVersion(db) ?? 0
    if (current > latest) throw newerSchemaError(current, latest)
    return [...migrations].sort((a, b) => a.version - b.version).filter(m => m.version > current)
  }
  if (pending().length === 0) return 0
  return db.transaction(() => {
    const todo = pending()
    const record = db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
    const now = new Date().toISOString()
    // a new database given the shipped migrations: their snapshot, recorded as each of them
    const fresh = todo.length === MIGRATIONS.length && todo.every(m => MIGRATIONS.includes(m))
    if (fresh) applySnapshot(db)
    for (const m of todo) {
      if (!fresh) db.exec(m.sql)
      record.run(m.version, m.name, now)
    }
    return todo.length
  }).immediate()
}

/**
 * A new database's schema in one go: the CREATE statements and rows every migration together leaves
 * (sqlite-snapshot.ts, computed when the code is built), about a third of the steps' time.
 */
function applySnapshot(db: Database): void {
  const snapshot = sqliteSnapshot()
  for (const sql of snapshot.statements) db.exec(sql)
  for (const { table, columns, values } of snapshot.rows) {
    const insert = db.query(`INSERT INTO "${table}" (${columns.map(c => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`)
    for (const row of values) insert.run(...row)
  }
}
