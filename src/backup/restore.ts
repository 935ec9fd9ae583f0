import { mkdir, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { BackupRefused, databaseBackup, latestSchemaVersion, type DatabaseBackup } from '../db/backup'
import { mediaBackup, type StorageSetting } from '../storage'
import type { MediaBackup } from '../storage/storage'
import { checkedPath, copyHashed, hashFile, holdsFiles, MANIFEST_NAME, readManifest, verifyBackup, type Manifest, type VerifyProgress } from './manifest'
import { MARKER_FORMAT, MARKER_NAME, readMarker, removeMarker, sweepMarked, writeMarker } from './marker'

/**
 * `notesvc restore SRC` into an empty data folder (or, on PostgreSQL, an empty database):
 *   1. refuses a target that holds a database or media, before anything else;
 *   2. reads the manifest and checks every file it names (size and SHA-256), refusing a damaged or
 *      incomplete backup and naming the file;
 *   3. copies the media to temporary names, renamed (hashed again as they pass), then the database
 *      last, so a data folder holding a database is a complete restore;
 *   4. on any failure after media were written (the database step's included), removes the media this
 *      run wrote and says so: the target is empty again and the same restore can run again. Chosen
 *      over restoring the database first: a database without its recordings would look complete to
 *      `serve`, and undoing a restored PostgreSQL database means dropping its tables; the database
 *      step is all or nothing by itself, so the media are all there is to take back.
 * A restore killed outright (SIGKILL, power loss) cannot take back what it wrote, so before the first
 * recording it writes a marker in the data folder (src/backup/marker.ts) naming the backup and every
 * file it will write, and removes it once the database is in place. A later restore that finds the
 * marker and no database removes those files (only those), says so, and restores; other commands
 * refuse to start while it is there.
 */

export interface RestoreOptions extends StorageSetting {
  src: string
  dataDir: string
  databasePath: string
  databaseUrl?: string
  onVerify?: VerifyProgress
  /** progress of the media copy */
  onMedia?: VerifyProgress
  say?: (line: string) => void
  database?: DatabaseBackup
}

export interface RestoreReport {
  manifest: Manifest
  files: number
  bytes: number
  seconds: number
}

/** Refuses a backup this configuration cannot take: another back end, a newer schema, media files for a storage that does not keep them as files (S3). */
function checkFits(m: Manifest, database: DatabaseBackup, o: RestoreOptions, media: MediaBackup): void {
  if (m.backEnd !== database.backEnd) throw new BackupRefused(database.otherBackEnd(m.backEnd))
  const latest = latestSchemaVersion(o)
  if (m.schemaVersion > latest) throw new BackupRefused(`the backup's database is at schema version ${m.schemaVersion}, newer than this build knows (${latest}); restore it with notesvc ${m.notesvcVersion} or newer`)
  if (m.database !== database.fileName) throw new BackupRefused(`the manifest names its database ${m.database}, and a ${m.backEnd} backup's is ${database.fileName}; this is not a backup notesvc wrote, use another backup`)
  const hasMedia = m.files.some(f => checkedPath(m, f.path).startsWith('media/'))
  if (hasMedia && !media.copied) {
    throw new BackupRefused(`this backup holds media files (its installation kept them on ${m.storage}), and NOTESVC_STORAGE=${o.storage} would not find them; restore with NOTESVC_STORAGE=${m.storage}, then copy media/ into ${media.leftIn} if you move to ${o.storage}`)
  }
}

/** Why the target cannot take a restore, or null when it is empty. */
async function occupied(o: RestoreOptions, database: DatabaseBackup): Promise<string | null> {
  const reason = await database.occupied()
  if (reason) return reason
  const media = join(o.dataDir, 'media')
  return (await holdsFiles(media)) ? `it holds media files (${media})` : null
}

export async function runRestore(o: RestoreOptions): Promise<RestoreReport> {
  const started = performance.now()
  const say = o.say ?? (() => {})
  const src = resolve(o.src)
  const database = o.database ?? databaseBackup(o)

  const manifest = await readManifest(src)
  const media = mediaBackup(o)
  checkFits(manifest, database, o, media)
  await sweepUnfinished(o, database, say)
  const taken = await occupied(o, database)
  if (taken) {
    throw new BackupRefused(`will not restore here: ${taken}. Restore only into an empty installation: ${database.emptyTarget}, or move the existing data away first`)
  }

  say(`checking ${manifest.files.length} files of the backup taken ${manifest.createdAt} (notesvc ${manifest.notesvcVersion}, schema version ${manifest.schemaVersion})`)
  const checked = await verifyBackup(src, manifest, o.onVerify)

  const mediaFiles = manifest.files.map(f => checkedPath(manifest, f.path)).filter(p => p.startsWith('media/'))
  await writeMarker(o.dataDir, {
    format: MARKER_FORMAT,
    startedAt: new Date().toISOString(),
    src,
    backup: { createdAt: manifest.createdAt, manifestSha256: await hashFile(join(src, MANIFEST_NAME)) },
    files: mediaFiles,
  })
  const written: Written = { files: [], folders: [] }
  const total = { files: mediaFiles.length, bytes: manifest.files.filter(f => checkedPath(manifest, f.path).startsWith('media/')).reduce((s, f) => s + f.size, 0) }
  const done = { files: 0, bytes: 0 }
  try {
    for (const f of manifest.files) {
      // checked by verifyBackup: the database file or a path under media/, normalised
      const path = checkedPath(manifest, f.path)
      if (!path.startsWith('media/')) continue
      const to = join(o.dataDir, path)
      const made = await mkdir(dirname(to), { recursive: true })
      if (made) written.folders.push(made)
      const copied = await copyHashed(join(src, path), to)
      if (copied) written.files.push(to)
      if (!copied || copied.sha256 !== f.sha256) throw new BackupRefused(`${f.path} changed in the backup while it was being restored; check the backup's disk and run restore again`)
      done.files++
      done.bytes += copied.size
      o.onMedia?.(done, total)
    }
    if (manifest.missingMedia.length > 0) say(`media: ${manifest.missingMedia.length} files were deleted while the backup was taken and are not in it (${manifest.missingMedia.slice(0, 3).join(', ')}${manifest.missingMedia.length > 3 ? ', …' : ''})`)
    // (a backup written before the manifest said where: where this configuration keeps them, when it is the same storage)
    const leftIn = manifest.mediaLeftIn ?? (manifest.storage === o.storage && !media.copied ? media.leftIn : null)
    if (leftIn) say(`media: not in the backup; they stay in ${leftIn}`)

    say(`database: restoring ${manifest.database} into ${database.source}`)
    // all or nothing by itself (SQLite: a temporary name renamed; PostgreSQL: one transaction)
    await database.restore(join(src, manifest.database))
  } catch (err) {
    // the marker stays when something could not be removed: the next restore removes it then
    if (await takeBack(written, join(o.dataDir, 'media'), say)) await removeMarker(o.dataDir)
    throw err
  }
  await removeMarker(o.dataDir)
  return { manifest, files: checked.files, bytes: checked.bytes, seconds: (performance.now() - started) / 1000 }
}

/** What this run wrote under the data folder: the recordings, and the folders it created for them. */
interface Written {
  files: string[]
  /** each the topmost folder one mkdir created */
  folders: string[]
}

/**
 * Removes what a failed restore wrote, so the target is as empty as before and the same restore can
 * run again (a data folder holding media is refused as occupied). A folder it created is removed only
 * when no file is left in it (nothing but this run wrote there; if something did, it stays).
 */
async function takeBack(written: Written, media: string, say: (line: string) => void): Promise<boolean> {
  if (written.files.length === 0 && written.folders.length === 0) return true
  const left: string[] = []
  for (const file of written.files) await rm(file, { force: true }).catch(() => left.push(file))
  for (const folder of written.folders.reverse()) {
    if (!(await holdsFiles(folder).catch(() => true))) await rm(folder, { recursive: true, force: true }).catch(() => left.push(folder))
  }
  const n = written.files.length
  say(left.length === 0
    ? `restore failed: removed the ${n} recording${n === 1 ? '' : 's'} this restore had written under ${media}, so the target is empty again; fix what the error below says and run restore again`
    : `restore failed, and ${left.length} of what it wrote could not be removed (${left.slice(0, 3).join(', ')}${left.length > 3 ? ', …' : ''}); remove ${media} by hand, fix what the error below says and run restore again`)
  return left.length === 0
}

/**
 * An earlier restore into this data folder that was killed before it finished (its marker is there):
 *   - with no database, what it wrote is removed (the files its marker names, nothing else), said on
 *     stderr, and this restore goes on;
 *   - with a database in place it had finished but for removing the marker (the database is written
 *     last, all or nothing): the marker is removed and this restore refused, as into any occupied target.
 */
async function sweepUnfinished(o: RestoreOptions, database: DatabaseBackup, say: (line: string) => void): Promise<void> {
  const marker = readMarker(o.dataDir)
  if (!marker) return
  const hasDatabase = await database.occupied()
  if (hasDatabase) {
    await removeMarker(o.dataDir)
    throw new BackupRefused(`an earlier restore here (the backup of ${marker.backup.createdAt}) had finished, its database in place, but was stopped before removing its marker ${MARKER_NAME}; removed the marker now, so start serve on it. To restore anyway, move the existing data away first`)
  }
  // a SQLite copy's temporary name, when the kill came in the database step (none on PostgreSQL)
  const removed = await sweepMarked(o.dataDir, marker, o.databasePath)
  await removeMarker(o.dataDir)
  say(`found an unfinished restore in ${o.dataDir} (the backup of ${marker.backup.createdAt}, begun ${marker.startedAt}): removed the ${removed} recording${removed === 1 ? '' : 's'} it had written (${marker.files.length} named in ${MARKER_NAME}, nothing else); restoring again`)
}

/** The summary line of a restore, for stdout. */
export function describeRestore(r: RestoreReport, target: string): string {
  const m = r.manifest
  return `restored the backup of ${m.createdAt} into ${target} in ${r.seconds.toFixed(1)} s: ${r.files} files (${r.bytes} bytes) checked against the manifest, ${m.counts.notes} notes, ${m.counts.accounts} accounts, schema version ${m.schemaVersion}; start serve on it`
}
