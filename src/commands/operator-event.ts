import type { Config } from '../config'
import { systemClock } from '../clock'
import { createIdGenerator } from '../ids'
import { openConfiguredStore } from '../db/open'
import { createServices } from '../services'
import { OPERATOR } from '../modules/audit/model'

/**
 * Records an event of the operator's (no account) after a backup or restore completed. The copy is
 * done whatever happens here, so a failure is a warning on stderr, not the command's failure.
 */
export async function recordOperatorEvent(config: Config, action: 'backup.created' | 'backup.restored', details: Record<string, string | number>): Promise<void> {
  try {
    const store = await openConfiguredStore(config, { poolSize: 1 })
    try {
      const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator() })
      await services.audit.recordBy(OPERATOR, { accountId: null, action, target: null, details })
    } finally {
      await store.close()
    }
  } catch (err) {
    process.stderr.write(`warning: the ${action} event could not be written to the audit log (${err instanceof Error ? err.message : String(err)}); the ${action === 'backup.created' ? 'backup' : 'restore'} itself is complete\n`)
  }
}
