import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { BackupRefused, databaseBackup, type DatabaseBackup, type DatabaseSnapshot } from '../db/backup'
import { mediaBackup, type StorageSetting } from '../storage'
import { VERSION } from '../version'
import { copyHashed, MANIFEST_FORMAT, MANIFEST_NAME, temporaryName, writeFileAtomically, type Manifest, type ManifestFile } from './manifest'

/**
 * `notesvc backup DEST`, safe while `serve` runs:
 *   1. the database, one consistent snapshot (src/db/backup.ts), to a temporary name in DEST, renamed;
 *   2. when the storage's media are copied into a backup (disk), the media files that snapshot refers
 *      to, each to a temporary name, renamed.
 *      Media files are written once and never changed, so a file copied after the snapshot is the one
 *      the snapshot means. A file gone by then (its note deleted after the snapshot, by its owner or a
 *      retention sweep) is reported and listed in the manifest's `missingMedia`, not fatal: the backup
 *      is still the snapshot's state, less a recording that was being deleted anyway;
 *   3. the manifest, last: a folder without one is visibly a backup that did not finish.
 * A storage whose media are not copied (S3: they stay in the bucket, its versioning or replication
 * protects them) has only the database copied, and the output says where the media are.
 */

export interface BackupOptions extends StorageSetting {
  dest: string
  dataDir: string
  databasePath: string
  databaseUrl?: string
  clock?: () => Date
  /** progress of the media copy */
  onMedia?: (done: { files: number; bytes: number }, total: { files: number; bytes: number }) => void
  /** one line for stderr (what is copied, and what is not) */
  say?: (line: string) => void
  /** the database half, when not the configuration's (tests) */
  database?: DatabaseBackup
}

export interface BackupReport {
  dest: string
  manifest: Manifest
  databaseBytes: number
  mediaFiles: number
  mediaBytes: number
  seconds: number
}

/** Refuses a DEST that exists and is not an empty folder; creates it when it does not exist. */
async function prepareDest(dest: string): Promise<void> {
  const s = await stat(dest).catch(() => null)
  if (s && !s.isDirectory()) throw new BackupRefused(`${dest} is a file, not a folder; name a new or empty folder for the backup, e.g. ${dest}-backup`)
  if (s && (await readdir(dest)).length > 0) {
    throw new BackupRefused(`${dest} is not empty; a backup goes into a new or empty folder, so it never mixes with another one. Name a new folder (for example one named after today's date)`)
  }
  await mkdir(dest, { recursive: true })
}

export async function runBackup(o: BackupOptions): Promise<BackupReport> {
  const started = performance.now()
  const say = o.say ?? (() => {})
  const dest = resolve(o.dest)
  const database = o.database ?? databaseBackup(o)
  await prepareDest(dest)

  // 1. the database
  const createdAt = (o.clock?.() ?? new Date()).toISOString()
  const dbPath = join(dest, database.fileName)
  const dbTemp = temporaryName(dbPath)
  say(`database: copying ${database.source} (${database.backEnd}) into ${dbPath}`)
  let snapshot: DatabaseSnapshot
  let dbFile: ManifestFile
  try {
    snapshot = await database.dump(dbTemp)
    dbFile = { path: database.fileName, ...(await hashAndRename(dbTemp, dbPath)) }
  } catch (err) {
    await rm(dbTemp, { force: true })
    throw err
  }
  say(`database: ${dbFile.size} bytes, schema version ${snapshot.schemaVersion}, ${snapshot.counts.notes} notes, ${snapshot.counts.accounts} accounts`)

  // 2. the media
  const files: ManifestFile[] = [dbFile]
  const missingMedia: string[] = []
  let mediaBytes = 0
  const media = mediaBackup(o)
  if (!media.copied) {
    say(`media: left in ${media.leftIn} and not copied (${snapshot.mediaKeys.length} files); ${media.advice}`)
  } else {
    const sizes = await Promise.all(snapshot.mediaKeys.map(async key => (await stat(media.fileOf(key)).catch(() => null))?.size ?? 0))
    const total = { files: snapshot.mediaKeys.length, bytes: sizes.reduce((s, n) => s + n, 0) }
    const done = { files: 0, bytes: 0 }
    for (const key of snapshot.mediaKeys) {
      const path = `media/${key}`
      const copied = await copyHashed(media.fileOf(key), join(dest, path), n => { done.bytes += n })
      if (!copied) {
        missingMedia.push(key)
        say(`media: ${key} was deleted after the database was copied (its note removed meanwhile); left out`)
      } else {
        files.push({ path, ...copied })
        mediaBytes += copied.size
      }
      done.files++
      o.onMedia?.(done, total)
    }
  }

  // 3. the manifest, last
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    notesvcVersion: VERSION,
    schemaVersion: snapshot.schemaVersion,
    backEnd: database.backEnd,
    storage: media.storage,
    createdAt,
    database: database.fileName,
    counts: snapshot.counts,
    ...(media.copied ? {} : { ...media.manifest, mediaLeftIn: media.leftIn }),
    missingMedia,
    files,
  }
  await writeFileAtomically(join(dest, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`)
  return { dest, manifest, databaseBytes: dbFile.size, mediaFiles: files.length - 1, mediaBytes, seconds: (performance.now() - started) / 1000 }
}

/** Hashes the finished temporary database file and renames it to its name. */
async function hashAndRename(temp: string, final: string): Promise<{ size: number; sha256: string }> {
  const hasher = new Bun.CryptoHasher('sha256')
  let size = 0
  for await (const chunk of Bun.file(temp).stream()) {
    hasher.update(chunk)
    size += chunk.byteLength
  }
  await rename(temp, final)
  return { size, sha256: hasher.digest('hex') }
}

/** The summary line of a backup, for stdout. */
export function describeBackup(r: BackupReport): string {
  const m = r.manifest
  const media = m.mediaLeftIn
    ? `media left in ${m.mediaLeftIn} (not in this backup)`
    : `${r.mediaFiles} media files (${r.mediaBytes} bytes)${m.missingMedia.length ? `, ${m.missingMedia.length} deleted meanwhile and left out` : ''}`
  return `backup written to ${r.dest} in ${r.seconds.toFixed(1)} s: ${m.backEnd} database (${r.databaseBytes} bytes, schema version ${m.schemaVersion}, ${m.counts.notes} notes, ${m.counts.accounts} accounts), ${media}; manifest.json lists every file with its SHA-256`
}
