import { existsSync } from 'node:fs'
import { describeDataDir, type Config } from '../config'
import { systemClock } from '../clock'
import { createIdGenerator } from '../ids'
import type { Logger } from '../log'
import { openConfiguredStore } from '../db/open'
import { createServices, type Services } from '../services'
import { AccountError } from '../modules/accounts/service'
import { noDatabaseYet } from '../doctor'
import { writeStderr } from '../std-streams'

/**
 * Says on stderr which data folder a command uses, when the user did not name it: the default
 * (~/.local/share/notesvc) or an existing ./data. A folder set with NOTESVC_DATA_DIR or --data-dir is
 * the one the user named, and scripts that set it get clean output.
 */
export function announceDataDir(config: Config): void {
  if (config.dataDirSource !== 'set') writeStderr(`${describeDataDir(config)}\n`)
}

/**
 * The services on the data folder's database, for the commands that manage accounts and keys. Says on
 * stderr which data folder it is; a command that only reads or changes what exists (`mayCreate`
 * false) is refused rather than creating an empty database where the server's is not.
 */
export async function openServices(config: Config, mayCreate: boolean, log?: Logger): Promise<{ services: Services; close(): Promise<void> }> {
  announceDataDir(config)
  if (!mayCreate && !config.databaseUrl && !existsSync(config.databasePath)) throw new AccountError(noDatabaseYet(config))
  const store = await openConfiguredStore(config, { poolSize: 2 })
  const services = createServices({ config, store, clock: systemClock, ids: createIdGenerator(), log })
  return { services, close: () => store.close() }
}
