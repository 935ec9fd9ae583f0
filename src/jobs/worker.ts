import type { Clock } from '../clock'
import type { Logger } from '../log'
import type { JobRow, JobsRepo } from './repo'

/** A failure that retrying cannot fix, with the note's `errorCode`. */
export class PermanentJobError extends Error {
  constructor(readonly code: string, message: string) {
    super(message)
  }
}

export type JobHandler = (job: JobRow, signal: AbortSignal) => Promise<void>

export type JobWakeup = ReturnType<typeof createJobWakeup>

/**
 * How the code that queues a job tells an idle worker to look now instead of at its next poll. Made
 * before the pool, so a service that queues jobs can be built before the pool that runs them.
 */
export function createJobWakeup() {
  let wake: (() => void) | null = null
  return {
    /** A job was queued: an idle worker looks now. */
    notify: () => {
      wake?.()
    },
    /** the pool's side: `fn` wakes the worker that waits now */
    waiting: (fn: () => void) => {
      wake = fn
    },
    done: (fn: () => void) => {
      if (wake === fn) wake = null
    },
  }
}

export interface WorkerPoolOptions {
  jobs: JobsRepo
  clock: Clock
  log: Logger
  workers: number
  handlers: Record<string, JobHandler>
  /** called once a job has failed for good (permanent error, or retries used up) */
  onFailure(job: JobRow, error: unknown): void
  /** shared with the code that queues jobs; by default the pool's own */
  wakeup?: JobWakeup
  maxAttempts?: number
  pollMs?: number
}

const backoffMs = (attempt: number) => Math.min(60_000, 1000 * 2 ** (attempt - 1))

/**
 * Runs queued jobs from the database, `workers` at a time. Jobs survive restarts: start() puts back
 * in the queue whatever a dead process left running. A transient failure is retried with backoff.
 */
export function createWorkerPool(opts: WorkerPoolOptions) {
  const maxAttempts = opts.maxAttempts ?? 3
  const pollMs = opts.pollMs ?? 500
  const stopping = new AbortController()
  const loops: Promise<void>[] = []
  const wakeup = opts.wakeup ?? createJobWakeup()

  function idle(): Promise<void> {
    return new Promise(resolve => {
      const timer = setTimeout(done, pollMs)
      function done() {
        clearTimeout(timer)
        wakeup.done(done)
        resolve()
      }
      wakeup.waiting(done)
      stopping.signal.addEventListener('abort', done, { once: true })
    })
  }

  async function runOne(job: JobRow) {
    const handler = opts.handlers[job.kind]
    const now = () => opts.clock.now().toISOString()
    try {
      if (!handler) throw new PermanentJobError('internal', `no handler for job kind ${job.kind}`)
      await handler(job, stopping.signal)
      opts.jobs.finish(job.id, 'done', null, now())
    } catch (err) {
      if (stopping.signal.aborted) {
        // Shutting down: the job goes back to the queue and runs again after the restart.
        opts.jobs.retry(job.id, now(), 'interrupted by shutdown', now())
        return
      }
      const message = err instanceof Error ? err.message : String(err)
      if (!(err instanceof PermanentJobError) && job.attempts < maxAttempts) {
        opts.log.warn('job failed, will retry', { jobId: job.id, noteId: job.note_id, attempt: job.attempts, error: message })
        opts.jobs.retry(job.id, new Date(opts.clock.now().getTime() + backoffMs(job.attempts)).toISOString(), message, now())
        return
      }
      opts.log.error('job failed', { jobId: job.id, noteId: job.note_id, attempts: job.attempts, error: message })
      opts.jobs.finish(job.id, 'failed', message, now())
      opts.onFailure(job, err)
    }
  }

  async function loop() {
    while (!stopping.signal.aborted) {
      const job = opts.jobs.claim(opts.clock.now().toISOString())
      if (job) await runOne(job)
      else await idle()
    }
  }

  return {
    /** Puts jobs a dead process left running back in the queue, then starts the workers. */
    start(): number {
      const recovered = opts.jobs.requeueRunning(opts.clock.now().toISOString())
      if (recovered) opts.log.info('resumed jobs left running by the previous process', { jobs: recovered })
      for (let i = 0; i < opts.workers; i++) loops.push(loop())
      return recovered
    },
    /** A job was queued: an idle worker looks now instead of at its next poll. */
    notify() {
      wakeup.notify()
    },
    async stop() {
      stopping.abort()
      await Promise.all(loops)
    },
  }
}

export type WorkerPool = ReturnType<typeof createWorkerPool>
