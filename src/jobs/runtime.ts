import type { Clock } from '../clock'
import type { Store } from '../db/store'
import type { IdGenerator } from '../ids'
import type { Logger } from '../log'
import { databaseClock } from './database-clock'
import { createJobKinds, type JobKind, type JobStage } from './kinds'
import { liveWorkers, thisProcess } from './presence'
import { createRecurringJobs, scheduleRecurring, type RecurringTask } from './recurring'
import { createJobsRepo } from './repo'
import { createJobWakeup } from './wakeup'
import { createWorkerPool, type WorkerPoolOptions } from './worker'

/**
 * A loop of a module's own that runs in every process with workers (the webhook sender): started
 * with the workers and given this worker process's id, stopped before them.
 */
interface WorkerCompanion {
  start(owner: string): void
  stop(): Promise<void>
}

/** A queue now, for the metrics: rows waiting and running, and when the oldest waiting one became due. */
interface QueueDepthNow {
  queued: number
  running: number
  oldestDueAt: string | null
}

/** What a module registers its background work with, and queues its jobs through. */
export interface JobRegistry {
  /** a kind of job this process runs: its stages, its failure rule, its retries (jobs/kinds.ts) */
  register<Stage extends JobStage>(kind: JobKind<Stage>): void
  /** work that recurs on a schedule, run by one process at a time across every node (jobs/recurring.ts) */
  recur(task: RecurringTask): void
  /** a loop that runs beside the workers of every process that has them */
  alongside(companion: WorkerCompanion): void
  /**
   * Queues a job of `kind` for a note, due now in the database's time, in the caller's transaction if
   * there is one (on PostgreSQL its NOTIFY goes out at commit); `payload`: what its stages need beyond
   * the note, as the module's own JSON. Call `wake` after the commit.
   */
  enqueue(kind: string, noteId: string, payload?: string | null): Promise<void>
  /** tells this process's idle workers a job is waiting */
  wake(): void
}

/** How often a recurring task is looked for, at most: its interval, or a minute when that is longer. */
const RECURRING_POLL_MS = 60_000

/**
 * The jobs of one process: the queue (jobs/repo.ts), the kinds the modules registered, the worker
 * pool that runs them, the recurring tasks and the loops that run beside the workers, all started and
 * stopped together. Nothing here knows what a job does: the modules register that.
 */
export function createJobRuntime(deps: {
  store: Store
  clock: Clock
  ids: IdGenerator
  log: Logger
  /** NOTESVC_WORKERS: jobs this process runs at once; with 0 nothing registered runs in this process */
  workers: number
  leaseMs: number
  maxTakeovers: number
  onOutcome?: WorkerPoolOptions['onOutcome']
}) {
  const { store, log, leaseMs } = deps
  const jobs = createJobsRepo(store)
  /** jobs are queued in the database's time, which the workers of every node compare it with */
  const clock = databaseClock(jobs, deps.clock)
  const wakeup = createJobWakeup()
  const kinds = createJobKinds()
  const recurring = createRecurringJobs(store)
  const tasks: RecurringTask[] = []
  const companions: WorkerCompanion[] = []
  const identity = thisProcess(deps.ids.next('wrk'))
  const pool = createWorkerPool({
    jobs, clock: deps.clock, log, workers: deps.workers, wakeup, leaseMs, maxTakeovers: deps.maxTakeovers, identity, kinds, onOutcome: deps.onOutcome,
  })
  let stopTasks: (() => Promise<void>)[] = []

  const registry: JobRegistry = {
    register: kind => kinds.add(kind),
    recur: task => { tasks.push(task) },
    alongside: companion => { companions.push(companion) },
    async enqueue(kind, noteId, payload = null) {
      await clock.fresh()
      const { at, runAfter } = clock.queueTimes()
      await jobs.enqueue(deps.ids.next('job'), noteId, kind, at, runAfter, payload)
    },
    wake: () => wakeup.notify(),
  }

  return {
    ...registry,
    /** the queue's rows (tests, `db copy`, the retention command's clock) */
    jobs,
    /** the rows of the recurring tasks (`notesvc retention sweep` runs one under the same lease) */
    recurring,
    /** now in the database's time, which queued rows are stamped in */
    now: () => clock.now(),

    /**
     * The queues now, in the database's time, for the metrics: the jobs (named `upload_jobs`, as before
     * other kinds shared the table) and the other leased queues given, by name.
     */
    async depths<Q extends string>(others: Record<Q, (at: string) => Promise<QueueDepthNow>>): Promise<({ queue: 'upload_jobs' | Q } & QueueDepthNow)[]> {
      await clock.fresh()
      const at = clock.now().toISOString()
      const named = Object.entries(others) as [Q, (at: string) => Promise<QueueDepthNow>][]
      const [own, ...rest] = await Promise.all([jobs.depth(at), ...named.map(([, depth]) => depth(at))])
      return [{ queue: 'upload_jobs' as const, ...own! }, ...rest.map((d, i) => ({ queue: named[i]![0], ...d }))]
    },

    /** the worker processes that heartbeat in the database (within two leases), less those of this machine that are gone */
    liveWorkers: async (): Promise<number> => {
      await clock.fresh()
      return liveWorkers(jobs, clock, leaseMs, identity)
    },

    /** this process's workers, with the recurring tasks and the companions that run beside them */
    workers: {
      id: pool.id,
      /** Starts the pool (returns the jobs of gone local workers it put back), then, with workers, the companions and the recurring tasks. */
      async start(): Promise<number> {
        const recovered = await pool.start()
        if (deps.workers > 0) {
          for (const companion of companions) companion.start(pool.id)
          stopTasks = tasks.map(task => {
            const everyMs = Math.min(task.everyMs, RECURRING_POLL_MS)
            return scheduleRecurring({ rows: recurring, clock, owner: pool.id, leaseMs, log, pollMs: everyMs, firstAfterMs: everyMs }, task)
          })
        }
        return recovered
      },
      /** Stops the recurring tasks, the companions, then the pool (its running jobs go back to the queue). */
      async stop(): Promise<void> {
        for (const stop of stopTasks.splice(0)) await stop()
        for (const companion of companions) await companion.stop()
        await pool.stop()
      },
      notify: pool.notify,
      busy: pool.busy,
    },
  }
}
