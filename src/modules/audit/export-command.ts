import type { AuditService } from './service'
import { OPERATOR } from './model'

/** What `notesvc audit export` needs of the services. */
export interface AuditExportDeps {
  audit: AuditService
  /** the account of an email; throws (AccountError) when there is none */
  accountOf(email: string): Promise<{ id: string }>
}

/**
 * `notesvc audit export [--email E] [--since D]`: the events of one account, or of every account (and
 * those of no account: failed sign-ins for unknown emails) when no email is given, oldest first, one
 * JSON object a line to `write`; a count to `progress` every 1000 events and at the end. The export is
 * itself recorded, by the operator. Returns how many events were written.
 */
export async function exportAuditLog(deps: AuditExportDeps, o: { email?: string; since?: string }, write: (line: string) => Promise<void>, progress: (line: string) => void): Promise<number> {
  const accountId = o.email === undefined ? null : (await deps.accountOf(o.email)).id
  await deps.audit.recordBy(OPERATOR, {
    accountId, action: 'audit.exported', target: accountId ? { type: 'account', id: accountId } : null,
    details: { scope: accountId ? 'account' : 'all', ...(o.since ? { since: o.since } : {}) },
  })
  let n = 0
  for await (const e of deps.audit.export(accountId, { since: o.since })) {
    await write(`${JSON.stringify(e)}\n`)
    if (++n % 1000 === 0) progress(`audit export: ${n} events…`)
  }
  progress(`audit export: ${n} event${n === 1 ? '' : 's'} ${accountId ? `of ${o.email}` : 'of all accounts'}${o.since ? ` since ${o.since}` : ''}`)
  return n
}
