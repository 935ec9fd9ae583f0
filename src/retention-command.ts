import type { Logger } from './log'
import type { Services } from './services'
import { systemClock } from './clock'
import { databaseClock } from './jobs/database-clock'
import { runIfDue } from './jobs/recurring'
import { RETENTION_SWEEP } from './modules/retention/service'
import type { SweepSummary } from './modules/retention/model'
export { unsweptNotice } from './modules/retention/sweep'

/**
 * The summary line of a sweep, as `notesvc retention sweep` prints it. "Recordings removed" are files
 * deleted from storage in either mode, with their notes or alone (SweepSummary.recordingsRemoved).
 */
export const describeSweep = (s: SweepSummary) =>
  `${s.notesDeleted} notes deleted, ${s.recordingsRemoved} recordings removed (files deleted from storage, with their notes or alone), ${s.skippedProcessing} skipped while processing, ${s.failed} failed, ${s.auditEventsPruned} audit events pruned`

/**
 * `notesvc retention sweep`: one sweep now, under the same leased row as the scheduled sweeps of the
 * workers (jobs/recurring.ts), so it never runs beside one: while another process holds the row, it
 * waits (a sweep killed mid-run holds it until its lease runs out, NOTESVC_JOB_LEASE_SECONDS). Progress
 * on stderr; returns the summary.
 */
export async function retentionSweepNow(services: Services, o: { leaseMs: number; everyMs: number; log: Logger; progress: (line: string) => void }): Promise<SweepSummary> {
  const clock = databaseClock(services.jobs, systemClock)
  const owner = `cli_${services.workers.id}`
  let waiting = false
  for (;;) {
    await clock.fresh()
    const now = clock.now().toISOString()
    await services.recurring.ensure(RETENTION_SWEEP, now, now)
    await services.recurring.dueNow(RETENTION_SWEEP, now)
    let summary: SweepSummary | undefined
    const { ran } = await runIfDue({ rows: services.recurring, clock, owner, leaseMs: o.leaseMs, log: o.log }, {
      id: RETENTION_SWEEP, everyMs: o.everyMs,
      run: async signal => {
        o.progress('retention sweep: started')
        summary = await services.retention.sweep({
          signal,
          onProgress: p => o.progress(`retention sweep: ${p.accountsSwept} accounts done, ${describeSweep(p)}`),
        })
      },
    })
    if (ran && summary) return summary
    if (!waiting) {
      const row = await services.recurring.get(RETENTION_SWEEP)
      o.progress(`retention sweep: another sweep is running (${row?.lease_owner ?? 'another process'}, lease until ${row?.lease_expires_at ?? '?'}); waiting for it to end`)
      waiting = true
    }
    await Bun.sleep(1000)
  }
}
