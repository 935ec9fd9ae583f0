import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join, posix } from 'node:path'
import { BackupRefused } from '../db/backup'

/**
 * A backup folder's manifest, `manifest.json`, written last: a folder without one is a backup that did
 * not finish. It names every file of the backup with its size and SHA-256, so `restore` (and
 * `backup --verify`) can refuse a damaged or incomplete copy before writing anything.
 */
export interface Manifest {
  /** `notesvc-backup/1` */
  format: string
  notesvcVersion: string
  schemaVersion: number
  /** `sqlite` or `postgres` */
  backEnd: string
  /** the installation's NOTESVC_STORAGE: `disk` (media in the backup) or `s3` (media left in the bucket) */
  storage: string
  /** when the database snapshot was taken: the backup holds the state of that moment */
  createdAt: string
  /** the database's file inside the backup */
  database: string
  counts: { notes: number; accounts: number }
  /** the S3 bucket holding the media, when storage is s3 */
  bucket?: string
  /** where the media stayed when the storage's media are not copied into a backup (a sentence: "the S3 bucket …") */
  mediaLeftIn?: string
  /** storage keys the database refers to whose files were gone when the media were copied */
  missingMedia: string[]
  files: ManifestFile[]
}

export interface ManifestFile {
  /** relative to the backup folder, with `/` */
  path: string
  size: number
  sha256: string
}

export const MANIFEST_NAME = 'manifest.json'
export const MANIFEST_FORMAT = 'notesvc-backup/1'

/** A temporary name beside `path`, hidden, unique per write. */
export const temporaryName = (path: string) => join(dirname(path), `.${basename(path)}.${crypto.randomUUID()}.part`)

/** Writes `text` to a temporary name beside `path`, syncs it and renames it into place. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temp = temporaryName(path)
  try {
    await Bun.write(temp, text)
    await syncPath(temp)
    await rename(temp, path)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}

async function syncPath(path: string): Promise<void> {
  const f = await open(path, 'r+')
  try {
    await f.sync()
  } finally {
    await f.close()
  }
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT'

/**
 * Copies `from` to `to` through a temporary name, hashing the bytes as they pass; returns the size and
 * SHA-256, or null when `from` does not exist (deleted meanwhile). Memory stays constant whatever the size.
 */
export async function copyHashed(from: string, to: string, onBytes?: (n: number) => void): Promise<{ size: number; sha256: string } | null> {
  await mkdir(dirname(to), { recursive: true })
  const temp = temporaryName(to)
  const hasher = new Bun.CryptoHasher('sha256')
  let size = 0
  try {
    const sink = Bun.file(temp).writer({ highWaterMark: 1 << 20 })
    try {
      for await (const chunk of Bun.file(from).stream()) {
        hasher.update(chunk)
        sink.write(chunk)
        size += chunk.byteLength
        onBytes?.(chunk.byteLength)
      }
    } catch (err) {
      if (!isMissing(err)) throw err
      await sink.end()
      await rm(temp, { force: true })
      return null
    }
    await sink.end()
    await syncPath(temp)
    await rename(temp, to)
    return { size, sha256: hasher.digest('hex') }
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}

/** The SHA-256 of a file, read as a stream. */
export async function hashFile(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher('sha256')
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk)
  return hasher.digest('hex')
}

/** Whether `dir` holds any file at any depth (a missing folder holds none). */
export async function holdsFiles(dir: string): Promise<boolean> {
  try {
    for (const name of await readdir(dir, { recursive: true })) {
      if ((await stat(join(dir, name)).catch(() => null))?.isFile()) return true
    }
    return false
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

/**
 * A manifest file's path, normalised, or a refusal: it must stay inside the backup folder and be the
 * database file or under `media/`. Normalised before it is checked, so "media/../models/x" is seen
 * as the "models/x" it would reach once joined to the data folder, and refused.
 */
export function checkedPath(m: Pick<Manifest, 'database'>, path: string): string {
  const n = posix.normalize(path)
  if (posix.isAbsolute(n) || n === '..' || n.startsWith('../')) throw new BackupRefused(`the manifest names a file outside the backup folder (${path}); this is not a backup notesvc wrote, use another backup`)
  if (n !== m.database && !(n.startsWith('media/') && n.length > 'media/'.length)) {
    throw new BackupRefused(`the manifest names a file that is neither the database nor under media/ (${path}); this is not a backup notesvc wrote, use another backup`)
  }
  return n
}

/** Reads and checks the manifest of the backup folder `dir`. */
export async function readManifest(dir: string): Promise<Manifest> {
  const path = join(dir, MANIFEST_NAME)
  const file = Bun.file(path)
  if (!(await file.exists())) {
    const what = (await stat(dir).catch(() => null))?.isDirectory() ? `${dir} has no ${MANIFEST_NAME}` : `${dir} is not a folder`
    throw new BackupRefused(`${what}: it is not a notesvc backup, or a backup that did not finish (the manifest is written last); use a complete backup, or take a new one with notesvc backup`)
  }
  let m: Manifest
  try {
    m = JSON.parse(await file.text()) as Manifest
  } catch {
    throw new BackupRefused(`${path} is not valid JSON: the backup is damaged; use another backup`)
  }
  if (m?.format !== MANIFEST_FORMAT || !Array.isArray(m.files) || typeof m.database !== 'string' || typeof m.schemaVersion !== 'number') {
    throw new BackupRefused(`${path} is not a manifest this build reads (format ${JSON.stringify(m?.format)}, expected ${MANIFEST_FORMAT}); use the notesvc that wrote the backup`)
  }
  if (!/^[^/\\]+$/.test(m.database) || m.database === '.' || m.database === '..' || m.database === MANIFEST_NAME) {
    throw new BackupRefused(`${path} names its database ${JSON.stringify(m.database)}, not a file at the top of the backup folder; this is not a backup notesvc wrote, use another backup`)
  }
  return m
}

export interface VerifyProgress {
  (done: { files: number; bytes: number }, total: { files: number; bytes: number }): void
}

/**
 * Checks every file the manifest names: present, of its size, of its SHA-256. Throws BackupRefused
 * naming the first file at fault; returns the files and bytes checked.
 */
export async function verifyBackup(dir: string, m: Manifest, progress?: VerifyProgress): Promise<{ files: number; bytes: number }> {
  const total = { files: m.files.length, bytes: m.files.reduce((s, f) => s + f.size, 0) }
  const done = { files: 0, bytes: 0 }
  // every path first, before reading any file
  const paths = m.files.map(f => checkedPath(m, f.path))
  if (!paths.includes(m.database)) throw new BackupRefused(`the manifest does not list the database file ${m.database}; the backup is damaged, use another backup`)
  for (const [i, f] of m.files.entries()) {
    const path = join(dir, paths[i]!)
    const s = await stat(path).catch(() => null)
    if (!s?.isFile()) throw new BackupRefused(`the backup is damaged: ${f.path} is missing from ${dir}; use another backup`)
    if (s.size !== f.size) throw new BackupRefused(`the backup is damaged: ${f.path} is ${s.size} bytes, the manifest says ${f.size}; use another backup`)
    if ((await hashFile(path)) !== f.sha256) throw new BackupRefused(`the backup is damaged: the SHA-256 of ${f.path} is not the one in the manifest; use another backup`)
    done.files++
    done.bytes += f.size
    progress?.(done, total)
  }
  return done
}
