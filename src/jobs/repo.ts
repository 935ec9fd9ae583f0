import { transactions, type Database } from '../db/database'

export interface JobRow {
  id: string
  note_id: string
  kind: string
  status: 'queued' | 'running' | 'done' | 'failed'
  attempts: number
  run_after: string
  last_error: string | null
  created_at: string
  updated_at: string
}

export type JobsRepo = ReturnType<typeof createJobsRepo>

export function createJobsRepo(db: Database) {
  const q = {
    insert: db.query(`INSERT INTO jobs (id, note_id, kind, status, attempts, run_after, created_at, updated_at) VALUES ($id, $note_id, $kind, 'queued', 0, $at, $at, $at)`),
    next: db.query<JobRow, [string]>(`SELECT * FROM jobs WHERE status = 'queued' AND run_after <= ? ORDER BY run_after, created_at LIMIT 1`),
    claim: db.query(`UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'queued'`),
    finish: db.query(`UPDATE jobs SET status = ?, last_error = coalesce(?, last_error), updated_at = ? WHERE id = ?`),
    retry: db.query(`UPDATE jobs SET status = 'queued', run_after = ?, last_error = ?, updated_at = ? WHERE id = ?`),
    requeueRunning: db.query(`UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'running'`),
    get: db.query<JobRow, [string]>('SELECT * FROM jobs WHERE id = ?'),
    forNote: db.query<JobRow, [string]>('SELECT * FROM jobs WHERE note_id = ? ORDER BY created_at DESC LIMIT 1'),
  }
  return {
    transaction: transactions(db).write,
    enqueue: (id: string, noteId: string, kind: string, at: string) => { q.insert.run({ id, note_id: noteId, kind, at }) },
    /** Takes the oldest job that is due, or null; one transaction, so two workers never take the same job. */
    claim(at: string): JobRow | null {
      return transactions(db).write(() => {
        const job = q.next.get(at)
        if (!job || q.claim.run(at, job.id).changes !== 1) return null
        return q.get.get(job.id) ?? null
      })
    },
    finish: (id: string, status: 'done' | 'failed', error: string | null, at: string) => { q.finish.run(status, error, at, id) },
    retry: (id: string, runAfter: string, error: string, at: string) => { q.retry.run(runAfter, error, at, id) },
    /** Start-up: jobs left running by a process that died go back to the queue. */
    requeueRunning: (at: string) => q.requeueRunning.run(at).changes,
    get: (id: string) => q.get.get(id),
    latestForNote: (noteId: string) => q.forNote.get(noteId),
  }
}
