import type { Clock } from '../clock'
import type { Logger } from '../log'
import { createPresence, type WorkerIdentity } from './presence'
import { DEFAULT_MAX_TAKEOVERS, nextAttemptAt, type RetryPolicy } from './queue'
import { leaseOf, LeaseLostError, type JobRow, type JobsRepo, type Lease } from './repo'
import { createJobWakeup, watchForJobs, type JobWakeup } from './wakeup'
import { databaseClock } from './database-clock'
import { PermanentJobError, WorkerDiedError, type JobKind, type JobKinds, type JobRun, type JobStage } from './kinds'

export interface WorkerPoolOptions {
  jobs: JobsRepo
  clock: Clock
  log: Logger
  /** how many jobs this process runs at once; 0 runs none */
  workers: number
  /**
   * the kinds this process runs, by name (kinds.ts): each with its stages, what to do once a job has
   * failed for good (permanent error, or retries used up; inside the transaction that ends it), and
   * its retries
   */
  kinds: JobKinds
  /** shared with the code that queues jobs; by default the pool's own */
  wakeup?: JobWakeup
  /** when a failed run of a kind without a policy of its own is tried again (default JOB_RETRIES) */
  retries?: RetryPolicy
  /** how many times a job's worker may die under it before the job fails instead (default 3) */
  maxTakeovers?: number
  /** how long a claimed job stays with this process without a heartbeat; heartbeats come every third of it */
  leaseMs?: number
  /** this process in the `workers` table */
  identity: WorkerIdentity
  /**
   * told how each run ended (the metrics): `done`, `failed` (for good), `retried` (back to the queue:
   * a transient failure, or shutdown), and `taken_over` when a run starts on a job whose earlier
   * runs all ended with their worker dying (leases: a run after a retry is not told apart)
   */
  onOutcome?: (outcome: 'done' | 'failed' | 'retried' | 'taken_over') => void
  /** SQLite: how often idle workers look for other processes' commits (`data_version`) */
  watchMs?: number
  /**
   * how often idle workers look for jobs that became due with time alone (retries, expired leases);
   * by default half a second, 5 seconds where the store announces new jobs (PostgreSQL's NOTIFY)
   */
  pollMs?: number
}

/**
 * Jobs (the upload's among them): a transient failure is tried again after 1 s, then 2 s (doubling, at
 * most a minute apart), three runs in all; the last failure fails the job for good.
 */
const JOB_RETRIES: RetryPolicy = { delaysMs: [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000], maxAttempts: 3, giveUpAfterMs: Number.POSITIVE_INFINITY }

interface Running {
  lease: Lease
  lost: AbortController
}

/**
 * Runs queued jobs from the database, `workers` at a time, beside workers of other processes on the
 * same database. A job is claimed with a lease that this process's heartbeat extends; a job whose
 * worker died is taken by another worker once its lease runs out; the last writes of a run are made
 * only while it still holds its lease. A run goes through its kind's stages from the one the row
 * reached, each stage's result written with the row's next stage. A transient failure is retried with
 * backoff (the kind's policy).
 */
export function createWorkerPool(opts: WorkerPoolOptions) {
  const { jobs, log } = opts
  // leases, retries and heartbeats in the database's time (PostgreSQL: the same on every machine)
  const clock = databaseClock(jobs, opts.clock)
  const retries = opts.retries ?? JOB_RETRIES
  const maxTakeovers = opts.maxTakeovers ?? DEFAULT_MAX_TAKEOVERS
  const leaseMs = opts.leaseMs ?? 60_000
  const stopping = new AbortController()
  const loops: Promise<void>[] = []
  const running = new Map<string, Running>()
  const wakeup = opts.wakeup ?? createJobWakeup()
  const presence = createPresence({ jobs, clock, me: opts.identity, slots: opts.workers, leaseMs })
  const stopTimers: (() => void | Promise<void>)[] = []
  const pollMs = opts.pollMs ?? (jobs.sql.notifies ? 5000 : 500)
  const now = () => clock.now().toISOString()
  const settling: Settling = { jobs, log, clock, retries, wakeup, stopping: stopping.signal, onOutcome: opts.onOutcome }

  async function heartbeat() {
    try {
      await clock.fresh()
      for (const lease of await presence.beat([...running.values()].map(r => r.lease))) {
        running.get(lease.id)?.lost.abort(new LeaseLostError(lease))
      }
    } catch (err) {
      // a beat missed (the database busy for seconds): the next one, a third of a lease later, tries again
      log.warn('worker heartbeat failed', { workerId: opts.identity.id, error: err })
    }
  }

  async function claim(): Promise<JobRow | null> {
    const at = clock.now()
    if (!(await jobs.anyDue(at.toISOString()))) return null
    return jobs.claim(opts.identity.id, at.toISOString(), new Date(at.getTime() + leaseMs).toISOString())
  }

  async function runOne(job: JobRow) {
    const kind = opts.kinds.get(job.kind)
    const lease = leaseOf(job)
    const lost = new AbortController()
    running.set(job.id, { lease, lost })
    // attempts - 1 = runs before = retries + takeovers: with no retry among them, this run follows a takeover
    if (job.takeovers > 0 && job.attempts - 1 === job.takeovers) opts.onOutcome?.('taken_over')
    let at = kind?.stages.findIndex(s => s.name === (job.stage ?? kind.stages[0].name)) ?? -1
    try {
      if (!kind) throw new PermanentJobError('internal', `no handler for job kind ${job.kind}`)
      if (at < 0) throw new PermanentJobError('internal', `job kind ${job.kind} has no stage ${job.stage}`)
      // a job whose worker died under it `maxTakeovers` times fails now rather than kill another
      if (job.takeovers >= maxTakeovers) throw new WorkerDiedError(job.id, job.takeovers)
      const signal = AbortSignal.any([stopping.signal, lost.signal])
      const run: JobRun = { signal, write: fn => jobs.fenced(lease, now(), fn) }
      for (;;) {
        const result = await kind.stages[at]!.run(job, run)
        const next = kind.stages[at + 1]
        if (!next) {
          await jobs.end(lease, 'done', null, now(), result ?? undefined)
          break
        }
        await jobs.advance(lease, now(), next.name, result ?? undefined)
        at++
      }
      opts.onOutcome?.('done')
    } catch (err) {
      await settleRun(settling, job, lease, lost.signal.aborted ? new LeaseLostError(lease) : err, kind, kind?.stages[Math.max(at, 0)])
    } finally {
      running.delete(job.id)
    }
  }

  async function loop() {
    while (!stopping.signal.aborted) {
      let job: JobRow | null = null
      try {
        job = await claim()
      } catch (err) {
        log.warn('could not claim a job; trying again shortly', { error: err })
        await Bun.sleep(Math.min(pollMs, 1000))
        continue
      }
      if (!job) {
        await wakeup.wait(stopping.signal)
        continue
      }
      wakeup.another()
      await runOne(job)
    }
  }

  return {
    id: opts.identity.id,
    /**
     * Registers this process in `workers` and starts its heartbeat and workers; jobs that gone local
     * workers left running go back to the queue first. Returns their number. With 0 workers: nothing.
     */
    async start(): Promise<number> {
      if (opts.workers === 0) return 0
      await clock.fresh()
      const recovered = await presence.arrive()
      if (recovered) log.info('resumed jobs left running by a worker that stopped', { jobs: recovered })
      // One beat at a time (one still waiting on the database is not doubled), kept so that stopping
      // waits for the one under way: it would write the row back after the process left.
      let beating: Promise<void> | null = null
      const beat = setInterval(() => {
        beating ??= heartbeat().finally(() => { beating = null })
      }, Math.max(100, Math.floor(leaseMs / 3)))
      stopTimers.push(async () => {
        clearInterval(beat)
        await beating
      })
      stopTimers.push(await watchForJobs({
        jobs, clock, wakeup, watchMs: opts.watchMs ?? 250, pollMs,
        onError: err => log.warn('could not look for new jobs', { error: err }),
      }))
      for (let i = 0; i < opts.workers; i++) loops.push(loop())
      return recovered
    },
    /** A job was queued: an idle worker looks now. */
    notify() {
      wakeup.notify()
    },
    /** Stops taking jobs; running jobs are interrupted and go back to the queue; the process leaves `workers`. */
    async stop() {
      stopping.abort()
      await Promise.all(loops)
      for (const stop of stopTimers.splice(0)) await stop()
      if (opts.workers > 0 && loops.length > 0) await presence.leave()
    },
    /** how many jobs this process runs now */
    busy: () => running.size,
  }
}

/** What ending a run needs from its pool. */
interface Settling {
  jobs: JobsRepo
  log: Logger
  clock: { now(): Date }
  /** the retries of a kind without a policy of its own */
  retries: RetryPolicy
  wakeup: JobWakeup
  /** aborted when the pool stops */
  stopping: AbortSignal
  onOutcome: WorkerPoolOptions['onOutcome']
}

/** After a run that did not finish: back to the queue (shutdown, transient failure) or failed for good. */
async function settleRun(ctx: Settling, job: JobRow, lease: Lease, err: unknown, kind: JobKind | undefined, stage: JobStage | undefined) {
  const { jobs, log, clock, wakeup } = ctx
  const now = () => clock.now().toISOString()
  const fields = { jobId: job.id, noteId: job.note_id, attempt: job.attempts, workerId: lease.owner, ...(stage && kind!.stages.length > 1 ? { stage: stage.name } : {}) }
  try {
    if (err instanceof LeaseLostError) throw err
    if (ctx.stopping.aborted) {
      // Shutting down: the job goes back to the queue at once, for another worker or the next start.
      if (!(await jobs.retry(lease, now(), 'interrupted by shutdown', now()))) throw new LeaseLostError(lease)
      ctx.onOutcome?.('retried')
      return
    }
    const message = err instanceof Error ? err.message : String(err)
    const again = err instanceof PermanentJobError ? null : nextAttemptAt(kind?.retries ?? ctx.retries, job.attempts, Date.parse(job.created_at), clock.now().getTime())
    if (again !== null) {
      log.warn('job failed, will retry', { ...fields, error: message })
      if (!(await jobs.retry(lease, new Date(again).toISOString(), message, now()))) throw new LeaseLostError(lease)
      ctx.onOutcome?.('retried')
      setTimeout(() => wakeup.notify(), Math.max(0, again - clock.now().getTime())).unref()
      return
    }
    log.error('job failed', { ...fields, error: message })
    // a kind this process does not know has no one to tell: the job ends failed, and the log says why
    await jobs.end(lease, 'failed', message, now(), () => (kind && stage ? kind.onFailure(job, err, stage) : undefined))
    ctx.onOutcome?.('failed')
  } catch (e) {
    if (e instanceof LeaseLostError) log.warn('job no longer held by this run (another worker took it after its lease ran out, or its note was deleted); nothing of this run was written', fields)
    // The lease is no longer extended: once it runs out, a worker takes the job again.
    else log.error('could not record the end of a job; it runs again after its lease', { ...fields, error: e })
  }
}
