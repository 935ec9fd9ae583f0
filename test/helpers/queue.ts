import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { PostgresStore, SqliteStore, type Store } from '../../src/db/store'
import { createJobsRepo } from '../../src/jobs/repo'
import { freshPostgresUrl } from './backends'

let n = 0

/**
 * A queue database holding one account, one note and `jobs` queued jobs for it (ids job_0000,
 * job_0001, …, queued at `at`), with two stores on it, as two worker processes (or nodes) would have:
 * on SQLite a file in `dir` opened twice, on PostgreSQL a fresh database with two connection pools.
 * `target` is the file's path or the database's URL. `marks` is a table for tests to write to
 * inside fenced transactions.
 *
 * `oneSqliteConnection`: on SQLite both views share one store. Two SQLite connections in one process
 * cannot overlap their transactions (one waits in SQLite's busy handler, which blocks the thread the
 * other needs to commit), as two processes can; tests whose two sides run at the same time use one.
 */
export async function queueDb(backEnd: 'sqlite' | 'postgres', dir: string, jobs: number, at: string, o: { oneSqliteConnection?: boolean } = {}) {
  let target: string
  let db: Store
  let other: Store
  if (backEnd === 'postgres') {
    target = await freshPostgresUrl()
    db = new PostgresStore(target, { max: 4 })
    other = new PostgresStore(target, { max: 4 })
  } else {
    target = join(dir, `queue-${n++}.db`)
    db = new SqliteStore(openDatabase(target))
    other = o.oneSqliteConnection ? db : new SqliteStore(openDatabase(target))
  }
  await db.run(`INSERT INTO accounts (id, email, plan, grant_period, created_at) VALUES ('acct_1', 'a@example.com', 'free', ?, ?)`, [at.slice(0, 7), at])
  await db.run(`INSERT INTO notes (id, account_id, sandbox, status, type, date_created, updated_at) VALUES ('note_1', 'acct_1', 0, 'Summarizing', 'audio', ?, ?)`, [at, at])
  await db.run('CREATE TABLE marks (job_id TEXT, "by" TEXT, seq INTEGER)')
  const a = createJobsRepo(db)
  await db.transaction(async () => {
    for (let i = 0; i < jobs; i++) await a.enqueue(`job_${String(i).padStart(4, '0')}`, 'note_1', 'process_upload', at)
  })
  const b = createJobsRepo(other)
  let seq = 0
  /** a write of a mark through `on`, to run inside a fenced transaction (which it joins) */
  const mark = (on: Store, jobId: string, by: string) => async () => { await on.run('INSERT INTO marks VALUES (?, ?, ?)', [jobId, by, seq++]) }
  const marks = async () => (await db.all<{ job_id: string; by: string }>('SELECT job_id, "by" FROM marks ORDER BY seq'))
  let closed: Promise<void> | null = null
  /** closes both stores (once: later calls wait for the first) */
  const close = () => (closed ??= (async () => {
    await db.close()
    if (other !== db) await other.close()
  })())
  return { target, db, other, a, b, mark, marks, close }
}
