import type { Clock } from '../clock'
import type { JobsRepo } from './repo'

/** How often the offset to the database's clock is measured again. */
const RESYNC_MS = 60_000
/**
 * How much earlier than "now" a new job is made due on PostgreSQL: more than the error of two
 * machines' estimates of the database's time (half a round trip each), so that a worker woken by
 * the job's NOTIFY finds it due (a queue's order moves by no more than this).
 */
const DUE_SLACK_MS = 1000

/**
 * The time the queue's rows are written and compared in: on PostgreSQL the database server's clock
 * (this machine's clock plus the offset last measured, right to within half a round trip), so that
 * the machines of a cluster agree on when a job is due and when a lease runs out whatever their own
 * clocks say; on SQLite, one machine, `local` as it is. Without it, a job queued on a node whose clock
 * runs a little ahead would not yet be due for a worker woken by its NOTIFY, and would wait for the
 * next poll.
 */
export function databaseClock(jobs: JobsRepo, local: Clock) {
  let offset = 0
  let roundTrip = 0
  let syncedAt = Number.NEGATIVE_INFINITY
  const sync = async () => {
    const measured = await jobs.clockOffset(() => local.now().getTime())
    offset = measured.offsetMs
    roundTrip = measured.roundTripMs
    syncedAt = performance.now()
  }
  const now = (): Date => (offset === 0 ? local.now() : new Date(local.now().getTime() + offset))
  return {
    now,
    /** measures the offset now */
    sync,
    /** measures it when the last measure is more than a minute old (nothing to do on SQLite) */
    async fresh(): Promise<void> {
      if (jobs.sql.remoteClock && performance.now() - syncedAt > RESYNC_MS) await sync()
    },
    /**
     * When a job queued now is created and when it is due: now, and on PostgreSQL a little earlier
     * (the error of this estimate and of a worker's on another machine), so that it is due for any
     * worker that hears of it.
     */
    queueTimes(): { at: string; runAfter: string } {
      const at = now()
      const slack = jobs.sql.remoteClock ? DUE_SLACK_MS + Math.ceil(roundTrip / 2) : 0
      return { at: at.toISOString(), runAfter: new Date(at.getTime() - slack).toISOString() }
    },
  }
}
