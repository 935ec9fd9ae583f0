import type { Clock } from '../clock'
import type { JobsRepo } from './repo'

export type JobWakeup = ReturnType<typeof createJobWakeup>

/**
 * How the code that queues a job tells an idle worker to look now. Made before the pool, so a service
 * that queues jobs can be built before the pool that runs them. A notice that finds no idle worker is
 * kept for the next one that goes idle, so none is lost between a worker's last look and its wait.
 */
export function createJobWakeup() {
  const waiting = new Set<() => void>()
  let pending = false
  const wakeOne = (): boolean => {
    const first = waiting.values().next().value
    if (!first) return false
    first()
    return true
  }
  return {
    /** A job was queued: an idle worker looks now (or the next one to go idle does). */
    notify: () => {
      if (!wakeOne()) pending = true
    },
    /** One more idle worker looks, if any waits (a worker that just took a job passes the word on). */
    another: () => {
      wakeOne()
    },
    /** the pool's side: resolves when notified or stopped; at once for a notice no worker was there to take */
    wait(stop: AbortSignal): Promise<void> {
      if (pending || stop.aborted) {
        pending = false
        return Promise.resolve()
      }
      return new Promise(resolve => {
        const done = () => {
          waiting.delete(done)
          stop.removeEventListener('abort', done)
          resolve()
        }
        waiting.add(done)
        stop.addEventListener('abort', done, { once: true })
      })
    },
    /** how many workers wait */
    idle: () => waiting.size,
  }
}

/**
 * Wakes this process's idle workers for jobs it did not queue itself, and for what becomes due with
 * time alone (a retry's delay, a lease that runs out). Returns the function that stops it.
 *
 * PostgreSQL: the enqueue's transaction sends a NOTIFY (jobs/repo.ts), which every process LISTENs
 * for on one connection of its own: an idle worker in every process looks at once when a job is
 * queued anywhere, and again after the listening connection is re-established (notices sent while it
 * was down are lost). Every `pollMs` (slow: seconds) it also asks whether a job is due.
 *
 * SQLite: every `watchMs` it reads `PRAGMA data_version` (a few microseconds, no lock), which moves
 * when another process commits; after such a commit, and at least every `pollMs`, it asks whether a
 * job is due (an indexed read) and wakes a worker if so.
 *
 * Nothing is read while no worker is idle.
 */
export async function watchForJobs(o: { jobs: JobsRepo; clock: Clock; wakeup: JobWakeup; watchMs: number; pollMs: number; onError(err: unknown): void }): Promise<() => Promise<void>> {
  /** the look under way, if any: one at a time (a slow database never piles looks up), awaited at stop */
  let looking: Promise<void> | null = null
  const look = (changed: () => Promise<boolean>) => {
    if (looking || o.wakeup.idle() === 0) return
    looking = (async () => {
      try {
        if ((await changed()) && (await o.jobs.anyDue(o.clock.now().toISOString()))) o.wakeup.notify()
      } catch (err) {
        o.onError(err)
      } finally {
        looking = null
      }
    })()
  }

  const unlisten = await o.jobs.listen(() => o.wakeup.notify(), () => o.wakeup.notify())
  if (unlisten) {
    const timer = setInterval(() => look(async () => true), o.pollMs)
    return async () => {
      clearInterval(timer)
      await looking
      await unlisten()
    }
  }

  let seen = await o.jobs.changeCounter()
  let lookedAt = performance.now()
  const timer = setInterval(() => look(async () => {
    const version = await o.jobs.changeCounter()
    const t = performance.now()
    if (version === seen && t - lookedAt < o.pollMs) return false
    seen = version
    lookedAt = t
    return true
  }), o.watchMs)
  return async () => {
    clearInterval(timer)
    await looking
  }
}
