import { ConfigError, oneOf, type Env } from '../environment'
import { diskBackend } from './disk'
import { s3Backend } from './s3'
import type { MediaBackup, MediaStorage, StorageBackend, StorageCheck, StoragePlace } from './storage'

/**
 * The storage back ends, one line each, under their NOTESVC_STORAGE names; the first is the default.
 * A new back end is its adapter file (a `StorageBackend`) and its line here.
 */
const STORAGE_BACKENDS: readonly StorageBackend<unknown>[] = [
  diskBackend,
  s3Backend,
]

/** The variables the back ends read besides NOTESVC_STORAGE (config.ts takes them as flags too). */
export const STORAGE_VARIABLES = STORAGE_BACKENDS.flatMap(b => b.variables)

/** NOTESVC_STORAGE and the settings its back end parses from the environment, as Config holds them. */
export interface StorageSetting {
  storage: string
  /** absent: the back end's defaults, as with none of its variables set */
  storageSettings?: unknown
}

export function storageSetting(env: Env): Required<StorageSetting> {
  const storage = oneOf('NOTESVC_STORAGE', env.NOTESVC_STORAGE, STORAGE_BACKENDS.map(b => b.name), STORAGE_BACKENDS[0]!.name)
  return { storage, storageSettings: backendNamed(storage).settings(env) }
}

function backendNamed(name: string): StorageBackend<unknown> {
  const backend = STORAGE_BACKENDS.find(b => b.name === name)
  if (!backend) throw new ConfigError(`NOTESVC_STORAGE=${name} is not valid; use one of: ${STORAGE_BACKENDS.map(b => b.name).join(', ')}`)
  return backend
}

const settingsOf = (config: StorageSetting, backend: StorageBackend<unknown>) => config.storageSettings ?? backend.settings({})

/** The storage NOTESVC_STORAGE names, opened; throws (saying what to set) when its settings cannot work. */
export function createStorage(config: StorageSetting, place: StoragePlace): MediaStorage {
  const backend = backendNamed(config.storage)
  return backend.open(settingsOf(config, backend), place)
}

/** How `notesvc backup` and `restore` treat the configured storage's media. */
export function mediaBackup(config: StorageSetting & { dataDir: string }): MediaBackup & { storage: string } {
  const backend = backendNamed(config.storage)
  return { ...backend.backup(settingsOf(config, backend), config.dataDir), storage: config.storage }
}

/**
 * doctor's line on the storage: the back end's own check, and a warning when the database is shared
 * by several machines (PostgreSQL) but the media are not, naming the back ends that share them.
 */
export function checkStorage(config: StorageSetting & { dataDir: string; databaseUrl?: string }): StorageCheck {
  const backend = backendNamed(config.storage)
  const sharedDatabase = Boolean(config.databaseUrl)
  const check = backend.check(settingsOf(config, backend), { dataDir: config.dataDir, sharedDatabase })
  if (!check.ok || !sharedDatabase || backend.sharedByMachines) return check
  const shared = STORAGE_BACKENDS.filter(b => b.sharedByMachines).map(b => `NOTESVC_STORAGE=${b.name}${b.setup ? ` with ${b.setup}` : ''}`)
  return {
    ...check, warn: true,
    detail: `${check.detail}, with the database on PostgreSQL: fine for one machine, but several machines need shared media`,
    fix: `set ${shared.join(', or ')} on every node and worker`,
  }
}
