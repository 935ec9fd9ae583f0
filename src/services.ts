import type { Config } from './config'
import type { Clock } from './clock'
import type { Database } from './db/database'
import type { IdGenerator } from './ids'
import { instanceSecret } from './db/settings'
import { changeStamp, ReadCache } from './db/read-cache'
import { createAccountsRepo } from './modules/accounts/repo'
import { createAccountsService } from './modules/accounts/service'
import { createFoldersRepo } from './modules/folders/repo'
import { createFoldersService } from './modules/folders/service'
import { createNotesRepo } from './modules/notes/repo'
import { createNotesService } from './modules/notes/service'
import { createProcessingService } from './modules/processing/service'
import { createUsageRepo } from './modules/usage/repo'
import { createUsageService } from './modules/usage/service'

export interface CoreDeps {
  config: Config
  db: Database
  clock: Clock
  ids: IdGenerator
}

/** The services behind the routes and the CLI, built once from what varies (db, clock, ids, config). */
export function createServices(deps: CoreDeps) {
  const { db, clock, ids, config } = deps
  const transaction = <T>(fn: () => T): T => db.transaction(fn).immediate()
  const stamp = changeStamp(db)
  const accounts = createAccountsService({ repo: createAccountsRepo(db), clock, ids, keyCache: new ReadCache(stamp, config.readCache) })
  const usage = createUsageService({ repo: createUsageRepo(db), clock, ids, topUpCommand: 'the operator adds prepaid credits with: notesvc accounts credit --email <email> --credits <N>' })
  // Folders and notes refer to each other (a note's folder must exist; deleting a folder unfiles its
  // notes), so each gets the one function of the other it needs.
  let folderExists: (lib: { accountId: string; sandbox: boolean }, id: string) => boolean = () => false
  const notes = createNotesService({ repo: createNotesRepo(db), clock, ids, transaction, folderExists: (l, id) => folderExists(l, id), listCache: new ReadCache(stamp, config.readCache) })
  const folders = createFoldersService({ repo: createFoldersRepo(db), clock, ids, transaction, unfileNotes: id => notes.unfileFolder(id) })
  folderExists = folders.exists
  const processing = createProcessingService({ clock, notes, usage, publicUrl: config.publicUrl, uploadSecret: instanceSecret(db, 'upload_signing_key') })
  return { accounts, usage, notes, folders, processing }
}

export type Services = ReturnType<typeof createServices>
