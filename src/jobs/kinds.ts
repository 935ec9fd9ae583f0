import type { RetryPolicy } from './queue'
import type { JobRow } from './repo'

/** A failure that retrying cannot fix, with the note's `errorCode`. */
export class PermanentJobError extends Error {
  constructor(readonly code: string, message: string) {
    super(message)
  }
}

/**
 * A job whose worker died under it (crashed or was killed) as many times as NOTESVC_JOB_MAX_TAKEOVERS
 * allows: it is not started again. Its kind's failure rule says what that means to its owner.
 */
export class WorkerDiedError extends PermanentJobError {
  constructor(readonly jobId: string, readonly takeovers: number) {
    super('internal', `Processing stopped ${takeovers} times because the worker running it died (crashed or was killed) before it finished, so it was not started again. The server's log names the job (${jobId}).`)
  }
}

/** What a stage gets for one run of a job. */
export interface JobRun {
  /** aborted when the process stops or the run loses its lease: stop working */
  signal: AbortSignal
  /**
   * A write made while the run still holds its lease, in one transaction with the check (the writes
   * `fn` makes through any repository join it); else LeaseLostError and nothing written.
   */
  write<T>(fn: () => T | Promise<T>): Promise<T>
}

/**
 * Runs one stage of a job. It may return its last write (its result), which is made in one
 * transaction with recording that the job moved past the stage (after the last stage: with marking
 * the job done), only while the run holds its lease.
 */
export type JobHandler = (job: JobRow, run: JobRun) => Promise<(() => unknown) | void>

/** One stage of a job kind; its name is what the job's row remembers once the stage before it ended. */
export interface JobStage {
  name: string
  run: JobHandler
}

/**
 * A kind of job, registered by the module that owns its work: its stages in order (a run goes
 * through them one after another; a run after a retry, a release or a takeover starts at the stage
 * the row reached), what to do once it has failed for good (inside the transaction that ends it, told
 * the stage that failed), and when a failed run is tried again (default: JOB_RETRIES).
 */
export interface JobKind<Stage extends JobStage = JobStage> {
  kind: string
  stages: readonly [Stage, ...Stage[]]
  onFailure(job: JobRow, error: unknown, stage: Stage): unknown
  retries?: RetryPolicy
}

/** The kinds a process runs, by name; a name registered twice is a mistake of the wiring. */
export function createJobKinds() {
  // a kind's onFailure is a method, so a kind of its own stage type is a JobKind too
  const kinds = new Map<string, JobKind>()
  return {
    add<Stage extends JobStage>(kind: JobKind<Stage>): void {
      if (kinds.has(kind.kind)) throw new Error(`job kind ${kind.kind} is registered twice`)
      kinds.set(kind.kind, kind)
    },
    get: (name: string): JobKind | undefined => kinds.get(name),
  }
}

export type JobKinds = Pick<ReturnType<typeof createJobKinds>, 'get'>
