import { describeRestore, runRestore } from '../backup/restore'
import { commandLine } from '../command-name'
import { VERSION } from '../version'
import { UsageError } from './args'
import { out, type CommandContext } from './command'
import { announceDataDir } from './data-folder'
import { filesProgress } from './files-progress'
import { recordOperatorEvent } from './operator-event'

/** `restore SRC`: a backup into an empty data folder or PostgreSQL database, once every checksum is checked (src/backup/). */
export async function restoreCommand({ args: p, config }: CommandContext): Promise<number> {
  const folder = p.positional[1]
  if (!folder) throw new UsageError(`name the backup folder to restore: ${commandLine('restore /backups/notesvc-2026-11-26')}`)
  announceDataDir(config)
  const say = (line: string) => process.stderr.write(`${line}\n`)
  const r = await runRestore({ dataDir: config.dataDir, databasePath: config.databasePath, databaseUrl: config.databaseUrl, storage: config.storage, storageSettings: config.storageSettings, say, src: folder, onVerify: filesProgress('checking'), onMedia: filesProgress('media') })
  // in the restored database (brought to this build's schema by opening it, as serve would)
  await recordOperatorEvent(config, 'backup.restored', { createdAt: r.manifest.createdAt, backupVersion: r.manifest.notesvcVersion, notesvcVersion: VERSION, notes: r.manifest.counts.notes, files: r.files })
  out(describeRestore(r, config.databaseUrl ? 'the PostgreSQL database' : config.dataDir))
  return 0
}
