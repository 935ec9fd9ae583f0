import { describeSweep, retentionSweepNow, unsweptNotice } from '../retention-command'
import { UsageError } from './args'
import { out, type CommandContext } from './command'
import { openServices } from './data-folder'

/** `retention sweep`: one retention sweep now; exit 1 when a note it should delete could not be. */
export async function retentionCommand({ args: p, config, log }: CommandContext): Promise<number> {
  if (p.positional[1] !== 'sweep') throw new UsageError('retention needs a subcommand: sweep')
  // with the log: a note the sweep cannot delete is named there, with the storage's error
  const { services, close } = await openServices(config, false, log)
  try {
    const summary = await retentionSweepNow(services, { leaseMs: config.jobLeaseSeconds * 1000, everyMs: config.retention.sweepMinutes * 60_000, log, progress: line => process.stderr.write(`${line}\n`) })
    out(describeSweep(summary))
    const notice = unsweptNotice(summary)
    if (notice) {
      process.stderr.write(`notesvc: retention sweep: ${notice}\n`)
      return 1
    }
  } finally {
    await close()
  }
  return 0
}
