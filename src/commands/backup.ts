import { describeBackup, runBackup } from '../backup/backup'
import { readManifest, verifyBackup } from '../backup/manifest'
import { commandLine } from '../command-name'
import { UsageError } from './args'
import { out, type CommandContext } from './command'
import { announceDataDir } from './data-folder'
import { filesProgress } from './files-progress'
import { recordOperatorEvent } from './operator-event'

/** `backup DEST` and `backup --verify SRC` (src/backup/). */
export async function backupCommand({ args: p, config }: CommandContext): Promise<number> {
  const folder = p.positional[1]
  const verify = p.flags.verify
  if (verify !== undefined) {
    if (verify === true) throw new UsageError(`name the backup to check: ${commandLine('backup --verify /backups/notesvc-2026-11-26')}`)
    const manifest = await readManifest(verify)
    const r = await verifyBackup(verify, manifest, filesProgress('checking'))
    out(`${verify}: complete and intact, ${r.files} files (${r.bytes} bytes) match the manifest; taken ${manifest.createdAt}, ${manifest.backEnd}, schema version ${manifest.schemaVersion}, ${manifest.counts.notes} notes`)
    return 0
  }
  if (!folder) throw new UsageError(`name a new or empty folder for the backup: ${commandLine('backup /backups/notesvc-2026-11-26')}`)
  announceDataDir(config)
  const say = (line: string) => process.stderr.write(`${line}\n`)
  const r = await runBackup({ dataDir: config.dataDir, databasePath: config.databasePath, databaseUrl: config.databaseUrl, storage: config.storage, storageSettings: config.storageSettings, say, dest: folder, onMedia: filesProgress('media') })
  const m = r.manifest
  // in the live database; never the folder or the database URL (they may hold a password)
  await recordOperatorEvent(config, 'backup.created', { backEnd: m.backEnd, storage: m.storage, createdAt: m.createdAt, notes: m.counts.notes, files: m.files.length })
  out(describeBackup(r))
  return 0
}
