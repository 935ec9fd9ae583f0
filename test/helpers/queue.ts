import { join } from 'node:path'
import { openDatabase, type Database } from '../../src/db/database'
import { createJobsRepo } from '../../src/jobs/repo'

let n = 0

/**
 * A file database in `dir` holding one account, one note and `jobs` queued jobs for it (ids
 * job_0000, job_0001, …, queued at `at`), and two connections to it, as two worker processes would
 * have. `marks` is a table for tests to write to inside fenced transactions.
 */
export function queueDb(dir: string, jobs: number, at: string) {
  const path = join(dir, `queue-${n++}.db`)
  const db = openDatabase(path)
  db.exec(`INSERT INTO accounts (id, email, plan, grant_period, created_at) VALUES ('acct_1', 'a@example.com', 'free', '${at.slice(0, 7)}', '${at}')`)
  db.exec(`INSERT INTO notes (id, account_id, sandbox, status, type, date_created, updated_at) VALUES ('note_1', 'acct_1', 0, 'Summarizing', 'audio', '${at}', '${at}')`)
  db.exec('CREATE TABLE marks (job_id TEXT, by TEXT)')
  const a = createJobsRepo(db)
  for (let i = 0; i < jobs; i++) a.enqueue(`job_${String(i).padStart(4, '0')}`, 'note_1', 'process_upload', at)
  const other = openDatabase(path)
  const b = createJobsRepo(other)
  /** a write of a mark, to run inside a fenced transaction */
  const mark = (on: Database, jobId: string, by: string) => () => { on.query('INSERT INTO marks VALUES (?, ?)').run(jobId, by) }
  const marks = () => db.query<{ job_id: string; by: string }, []>('SELECT * FROM marks').all()
  return { path, db, other, a, b, mark, marks, close: () => { db.close(); other.close() } }
}
