import { existsSync } from 'node:fs'
import { openDatabase, schemaVersion, type Database } from './database'
import { migrateStore } from './migrate-store'
import { postgresMigrations } from './migrations-postgres'
import { PostgresStore, type Queryable, type SqlValue } from './store'

/**
 * `notesvc db copy --to postgres://…`: an installation's SQLite database copied into an empty
 * PostgreSQL database, then checked against it.
 *
 * The target is migrated first (`migrateStore`), then filled in one transaction: every table, parents
 * before the tables that refer to them, in batches of multi-row INSERTs, from one read transaction of
 * SQLite (one consistent state, even if a server still writes). Before the commit the copy is checked
 * inside the same transaction: each table's row count, the ledger (per account the number and sum of
 * its usage rows, and its balance columns) and each note's list item and change class, which the
 * PostgreSQL triggers computed anew. Any difference rolls everything back, so the target is either a
 * checked copy or as empty as it was. Media is not copied: storage keys are copied as they are, and
 * the media folder (or bucket) stays where it is.
 */

/** A copy that does not start, for the reason its message gives with what to do; nothing was written. */
export class CopyRefused extends Error {}

/**
 * What each back end keeps itself: its migrations write schema_migrations, its triggers the counter
 * and the search index (SQLite's FTS5 table, its shadow tables and search_keys; PostgreSQL's note_search is filled
 * by its triggers as the notes and their bodies are copied).
 */
const NOT_COPIED = new Set(['schema_migrations', 'note_revision_counter', 'search_keys', ...['', '_data', '_idx', '_content', '_docsize', '_config'].map(s => `note_search${s}`)])
/** Columns PostgreSQL's triggers compute (SQLite's generated columns are left out as hidden columns). */
const TRIGGER_COMPUTED: Record<string, string[]> = { notes: ['list_item', 'changed_within', 'revision'] }
const BATCH_ROWS = 500
/** A batch is sent sooner when its text passes this (transcripts can be long). */
const BATCH_CHARS = 4_000_000
const CHECK_ROWS = 1000

export interface CopyProgress {
  update(copied: number): void
  done(): void
}

export interface CopyReport {
  source: string
  /** the target's URL without its password */
  target: string
  schemaVersion: number
  /** migrations applied to the target before the copy */
  migrated: number
  tables: { table: string; rows: number }[]
  ledger: { accounts: number; usageRows: number; credits: number; grantUsed: number; purchased: number }
  notesChecked: number
  seconds: number
}

interface TablePlan {
  table: string
  columns: string[]
  /** columns referring to the same table: rows without one go first */
  selfReferences: string[]
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

export function withoutPassword(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@')
  }
}

/** The tables to copy, each after every table it refers to (in order of creation otherwise). */
function plan(db: Database): TablePlan[] {
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").all()
    .map(r => r.name).filter(n => !NOT_COPIED.has(n))
  const refs = (table: string) => db.query<{ table: string; from: string }, [string]>('SELECT "table", "from" FROM pragma_foreign_key_list(?)').all(table)
  const ordered: TablePlan[] = []
  const visit = (table: string, path: string[]) => {
    if (ordered.some(p => p.table === table)) return
    if (path.includes(table)) throw new Error(`the tables refer to each other in a circle (${[...path, table].join(' → ')}); they cannot be copied in order`)
    for (const r of refs(table)) if (r.table !== table && !NOT_COPIED.has(r.table)) visit(r.table, [...path, table])
    const computed = TRIGGER_COMPUTED[table] ?? []
    const columns = db.query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid').all(table)
      .map(c => c.name).filter(c => !computed.includes(c))
    ordered.push({ table, columns, selfReferences: refs(table).filter(r => r.table === table).map(r => r.from) })
  }
  for (const n of names) visit(n, [])
  return ordered
}

/** Refuses a target that lacks a table or column to copy into, or already holds rows. */
async function checkTarget(tx: Queryable, tables: TablePlan[], target: string): Promise<void> {
  const holding: string[] = []
  for (const t of tables) {
    const present = new Set((await tx.all<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?', [t.table])).map(c => c.name))
    const missing = t.columns.filter(c => !present.has(c))
    if (missing.length > 0) throw new Error(`the PostgreSQL schema has no ${missing.map(c => `${t.table}.${c}`).join(', ')} although it is at this build's version; nothing was copied`)
    if (await tx.get(`SELECT 1 AS x FROM ${quote(t.table)} LIMIT 1`)) holding.push(t.table)
  }
  if (holding.length > 0) {
    throw new CopyRefused(`the PostgreSQL database ${target} already holds rows (in ${holding.join(', ')}), and db copy fills only an empty database; nothing was copied. ` +
      'Copy into a new database (for example: createdb notesvc, then --to postgres://…/notesvc), or drop and create this one again, then run the copy again.')
  }
}

function insertText(t: TablePlan, rows: number): string {
  const tuple = `(${t.columns.map(() => '?').join(', ')})`
  return `INSERT INTO ${quote(t.table)} (${t.columns.map(quote).join(', ')}) VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`
}

/** Copies one table in batches; returns the number of rows copied. */
async function copyTable(db: Database, tx: Queryable, t: TablePlan, progress?: (table: string, total: number) => CopyProgress): Promise<number> {
  const total = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${quote(t.table)}`).get()!.n
  const bar = total > 0 ? progress?.(t.table, total) : undefined
  const order = [...t.selfReferences.map(c => `${quote(c)} IS NOT NULL`), 'rowid'].join(', ')
  const rows = db.query<Record<string, SqlValue>, []>(`SELECT ${t.columns.map(quote).join(', ')} FROM ${quote(t.table)} ORDER BY ${order}`)
  let batch: SqlValue[] = []
  let count = 0
  let chars = 0
  let copied = 0
  const flush = async () => {
    if (count === 0) return
    await tx.run(insertText(t, count), batch)
    copied += count
    batch = []
    count = 0
    chars = 0
    bar?.update(copied)
  }
  try {
    for (const row of rows.iterate()) {
      for (const c of t.columns) {
        const v = row[c] ?? null
        if (typeof v === 'string') chars += v.length
        batch.push(v)
      }
      count++
      if (count >= BATCH_ROWS || chars >= BATCH_CHARS) await flush()
    }
    await flush()
  } finally {
    bar?.done()
  }
  return copied
}

/** Checks the copy against the source, inside the copy's transaction; throws on any difference. */
async function verify(db: Database, tx: Queryable, tables: TablePlan[], copied: Map<string, number>): Promise<CopyReport['ledger'] & { notesChecked: number }> {
  const differences: string[] = []
  for (const t of tables) {
    const source = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${quote(t.table)}`).get()!.n
    const target = Number((await tx.get<{ n: string }>(`SELECT count(*) AS n FROM ${quote(t.table)}`))!.n)
    if (source !== target || copied.get(t.table) !== source) differences.push(`${t.table} has ${source} rows in SQLite and ${target} in PostgreSQL`)
  }

  const usageSql = 'SELECT account_id AS k, count(*) AS n, coalesce(sum(credits), 0) AS credits, coalesce(sum(grant_credits), 0) AS g, coalesce(sum(purchased_credits), 0) AS p FROM usage GROUP BY account_id'
  const balanceSql = 'SELECT id AS k, grant_period, grant_used, purchased_credits FROM accounts'
  const asText = (rows: Record<string, unknown>[]) => new Map(rows.map(({ k, ...r }) => [String(k), Object.values(r).map(String).join(' ')]))
  const compare = (what: string, a: Map<string, string>, b: Map<string, string>) => {
    for (const [k, v] of a) if (b.get(k) !== v) differences.push(`${what} of ${k}: ${v} in SQLite, ${b.get(k) ?? 'nothing'} in PostgreSQL`)
    for (const k of b.keys()) if (!a.has(k)) differences.push(`${what} of ${k}: only in PostgreSQL`)
  }
  const usage = db.query<{ k: string; n: number; credits: number }, []>(usageSql).all()
  const balances = db.query<{ k: string; grant_period: string; grant_used: number; purchased_credits: number }, []>(balanceSql).all()
  compare('the usage rows (count, sums of credits, grant credits, prepaid credits)', asText(usage), asText(await tx.all(usageSql)))
  compare('the balance (grant period, grant used, prepaid)', asText(balances), asText(await tx.all(balanceSql)))

  // Every note's list item and change class, as SQLite's generated columns hold them, in id order.
  let after = ''
  let notesChecked = 0
  const notesSql = 'SELECT id, list_item, changed_within FROM notes WHERE id > ? ORDER BY id LIMIT ?'
  for (;;) {
    const mine = db.query<{ id: string; list_item: string; changed_within: number }, [string, number]>(notesSql).all(after, CHECK_ROWS)
    const theirs = await tx.all<{ id: string; list_item: string; changed_within: number }>(notesSql, [after, CHECK_ROWS])
    for (const [i, n] of mine.entries()) {
      const p = theirs[i]
      if (!p || p.id !== n.id || p.list_item !== n.list_item || p.changed_within !== n.changed_within) differences.push(`note ${n.id}: its list item or change class differs`)
    }
    notesChecked += mine.length
    if (mine.length < CHECK_ROWS) break
    after = mine.at(-1)!.id
  }

  if (differences.length > 0) {
    const shown = differences.slice(0, 10).join('; ')
    throw new Error(`the copy does not match the SQLite database (${shown}${differences.length > 10 ? `; and ${differences.length - 10} more` : ''}); it was rolled back and PostgreSQL holds nothing of it`)
  }
  return {
    accounts: balances.length,
    usageRows: usage.reduce((s, u) => s + u.n, 0),
    credits: usage.reduce((s, u) => s + u.credits, 0),
    grantUsed: balances.reduce((s, b) => s + b.grant_used, 0),
    purchased: balances.reduce((s, b) => s + b.purchased_credits, 0),
    notesChecked,
  }
}

/** Copies the SQLite database at `sqlitePath` into the empty PostgreSQL database at `targetUrl`. */
export async function copyToPostgres(o: { sqlitePath: string; targetUrl: string; progress?: (table: string, total: number) => CopyProgress }): Promise<CopyReport> {
  const started = performance.now()
  const target = withoutPassword(o.targetUrl)
  if (!/^postgres(ql)?:\/\//.test(o.targetUrl)) throw new CopyRefused(`--to must be a PostgreSQL URL (postgres://user:password@host:5432/database), not ${target}`)
  if (!existsSync(o.sqlitePath)) {
    throw new CopyRefused(`there is no notesvc database at ${o.sqlitePath}; point NOTESVC_DATA_DIR (or --data-dir) at the data folder of the installation to copy`)
  }
  // Brought to this build's schema first, as serve would do.
  const db = openDatabase(o.sqlitePath)
  const store = new PostgresStore(o.targetUrl, { max: 2 })
  try {
    const migrated = await migrateStore(store, postgresMigrations())
    const version = schemaVersion(db) ?? 0
    const targetVersion = Math.max(...postgresMigrations().map(m => m.version))
    if (version !== targetVersion) throw new Error(`the SQLite database is at schema version ${version} and the PostgreSQL one at ${targetVersion}; this build cannot copy between them`)
    const tables = plan(db)
    db.exec('BEGIN') // one read transaction: every table from the same state
    let report: CopyReport
    try {
      report = await store.transaction(async tx => {
        await checkTarget(tx, tables, target)
        const copied = new Map<string, number>()
        for (const t of tables) copied.set(t.table, await copyTable(db, tx, t, o.progress))
        const { notesChecked, ...ledger } = await verify(db, tx, tables, copied)
        return {
          source: o.sqlitePath, target, schemaVersion: version, migrated,
          tables: tables.map(t => ({ table: t.table, rows: copied.get(t.table)! })),
          ledger, notesChecked, seconds: (performance.now() - started) / 1000,
        }
      })
    } finally {
      db.exec('COMMIT')
    }
    // The copy leaves the planner without statistics, and a dead version of each note's search row
    // (its triggers index a note, then again with its body): VACUUM ANALYZE, as the first thing
    // autovacuum would do, before any server plans a query on the copy.
    await store.run('VACUUM (ANALYZE)')
    return { ...report, seconds: (performance.now() - started) / 1000 }
  } finally {
    await store.close()
    db.close()
  }
}

/** What a copy did and checked, as lines for stdout. */
export function describeCopy(r: CopyReport): string[] {
  const width = Math.max(...r.tables.map(t => t.table.length))
  const rows = r.tables.reduce((s, t) => s + t.rows, 0)
  const l = r.ledger
  return [
    `copied ${r.source} into ${r.target} in ${r.seconds.toFixed(1)} s: ${rows} rows in ${r.tables.length} tables (schema version ${r.schemaVersion}; ${r.migrated} migrations applied to the target first)`,
    ...r.tables.map(t => `  ${t.table.padEnd(width)}  ${String(t.rows).padStart(8)} row${t.rows === 1 ? '' : 's'}`),
    `checked: the row count of every table is the same in both`,
    `checked: the ledger of ${l.accounts} account${l.accounts === 1 ? '' : 's'} is the same in both (${l.usageRows} usage rows summing to ${l.credits} credits; grant used ${l.grantUsed}, prepaid ${l.purchased} in the balances)`,
    `checked: the list item of each of ${r.notesChecked} notes, computed by PostgreSQL, is the one SQLite stores`,
    'media was not copied: its storage keys were, so keep the media folder or bucket where it is',
  ]
}
