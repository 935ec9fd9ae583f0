import type { Clock } from '../clock'
import type { JobsRepo } from './repo'

/** How often the offset to the database's clock is measured again. */
const RESYNC_MS = 60_000

export type DatabaseClock = ReturnType<typeof databaseClock>

/**
 * The time the queue's rows are written and compared in: on PostgreSQL the database server's clock
 * (this machine's clock plus the offset last measured, to within half a round trip), so that the
 * machines of a cluster agree on when a job is due and when a lease runs out whatever their own
 * clocks say; on SQLite, one machine, `local` as it is. A job queued on a node whose clock runs a
 * little ahead would otherwise not be due yet for a worker woken by its NOTIFY, and would wait for
 * the next poll.
 */
export function databaseClock(jobs: JobsRepo, local: Clock) {
  let offset = 0
  let syncedAt = Number.NEGATIVE_INFINITY
  const sync = async () => {
    offset = await jobs.clockOffsetMs(() => local.now().getTime())
    syncedAt = performance.now()
  }
  return {
    now: (): Date => (offset === 0 ? local.now() : new Date(local.now().getTime() + offset)),
    /** measures the offset now */
    sync,
    /** measures it when the last measure is more than a minute old (nothing to do on SQLite) */
    async fresh(): Promise<void> {
      if (jobs.dialect === 'postgres' && performance.now() - syncedAt > RESYNC_MS) await sync()
    },
  }
}
