import { exportAuditLog } from '../modules/audit/export-command'
import { stringFlag, UsageError } from './args'
import type { CommandContext } from './command'
import { openServices } from './data-folder'

/** `audit export [--email E] [--since D]`: the audit log as JSON lines on stdout. */
export async function auditCommand({ args: p, config }: CommandContext): Promise<number> {
  if (p.positional[1] !== 'export') throw new UsageError('audit needs a subcommand: export')
  const since = stringFlag(p, 'since')
  if (since !== undefined && Number.isNaN(Date.parse(since))) throw new UsageError(`--since must be a date or date-time such as 2026-11-01 or 2026-11-01T09:00:00Z, not "${since}"`)
  const { services, close } = await openServices(config, false)
  try {
    await exportAuditLog({ audit: services.audit, accountOf: e => services.accounts.requireAccount(e) }, { email: stringFlag(p, 'email'), since: since === undefined ? undefined : new Date(since).toISOString() }, writeStdout, line => process.stderr.write(`${line}\n`))
    return 0
  } finally {
    await close()
  }
}

/** Writes to stdout, waiting while its buffer is full (a long export piped to a slow reader). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (process.stdout.write(text, err => (err ? reject(err) : undefined))) resolve()
    else process.stdout.once('drain', resolve)
  })
}
