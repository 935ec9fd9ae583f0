import { mkdir, readdir, rm, rmdir } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { commandLine } from '../command-name'
import { BackupRefused } from '../db/backup'
import { writeFileAtomically } from './manifest'

/**
 * The marker of a restore under way, `.notesvc-restore.json` in the data folder (docs/decisions.md,
 * "Backups and restore"). Written before the first recording, removed once the database is in place:
 * a data folder holding it is a restore that was killed (SIGKILL, power loss) before it finished.
 *   - a later `restore` that finds it and no database removes the files it names (only those, and
 *     their temporary names), says so, and restores;
 *   - every other command that uses the data folder refuses to start, saying to run restore again.
 */

export const MARKER_NAME = '.notesvc-restore.json'
export const MARKER_FORMAT = 'notesvc-restore/1'

export interface RestoreMarker {
  format: typeof MARKER_FORMAT
  /** when this restore began */
  startedAt: string
  /** the backup folder, as given (resolved), so the refusal can name the command to run again */
  src: string
  backup: { createdAt: string; manifestSha256: string }
  /** what this restore writes, relative to the data folder (media/…), each written under a temporary name first */
  files: string[]
}

const markerPath = (dataDir: string) => join(dataDir, MARKER_NAME)

export async function writeMarker(dataDir: string, m: RestoreMarker): Promise<void> {
  await mkdir(dataDir, { recursive: true })
  await writeFileAtomically(markerPath(dataDir), `${JSON.stringify(m, null, 2)}\n`)
}

export async function removeMarker(dataDir: string): Promise<void> {
  await rm(markerPath(dataDir), { force: true })
}

/** The marker in `dataDir`, or null; a marker that is not one is refused, saying to remove it by hand. */
export function readMarker(dataDir: string): RestoreMarker | null {
  const path = markerPath(dataDir)
  if (!existsSync(path)) return null
  let m: RestoreMarker
  try {
    m = JSON.parse(readFileSync(path, 'utf8')) as RestoreMarker
  } catch {
    throw new BackupRefused(`${path} (left by a restore that did not finish) is not valid JSON; move the data folder ${dataDir} away and run notesvc restore again into an empty one`)
  }
  if (m?.format !== MARKER_FORMAT || !Array.isArray(m.files) || m.files.some(f => typeof f !== 'string')) {
    throw new BackupRefused(`${path} (left by a restore that did not finish) is not one this build reads (format ${JSON.stringify(m?.format)}); move the data folder ${dataDir} away and run notesvc restore again into an empty one`)
  }
  return m
}

/** The one line a command other than restore refuses to start with while the marker is there, or null. */
export function unfinishedRestore(dataDir: string): string | null {
  let m: RestoreMarker | null
  try {
    m = readMarker(dataDir)
  } catch (err) {
    return (err as Error).message
  }
  if (!m) return null
  return `a restore into ${dataDir} did not finish (the backup of ${m.backup.createdAt}, begun ${m.startedAt}; ${MARKER_NAME} is still there): run ${commandLine(`restore ${/\s/.test(m.src) ? `'${m.src}'` : m.src}`)} again to finish it before starting notesvc`
}

/**
 * Removes what the marker's restore wrote: each file it names, the temporary names beside them
 * (`.NAME.<uuid>.part`, from a copy killed midway), a SQLite copy's temporary name beside
 * `databasePath`, and the folders left empty up to the data folder.
 * A name that would leave the media folder is skipped (a marker is ours, but is read from disk).
 * Returns how many files were removed.
 */
export async function sweepMarked(dataDir: string, m: RestoreMarker, databasePath: string): Promise<number> {
  const root = resolve(dataDir)
  const media = join(root, 'media')
  let removed = 0
  const folders = new Set<string>()
  for (const name of m.files) {
    const path = resolve(root, name)
    if (relative(media, path).startsWith('..') || path === media) continue
    if (existsSync(path)) {
      await rm(path, { force: true })
      removed++
    }
    const dir = dirname(path)
    const prefix = `.${basename(path)}.`
    for (const entry of await readdir(dir).catch(() => [] as string[])) {
      if (entry.startsWith(prefix) && entry.endsWith('.part')) await rm(join(dir, entry), { force: true })
    }
    folders.add(dir)
  }
  // a SQLite database copy killed before its rename (src/db/backup.ts writes it as .notesvc.db.<uuid>.part)
  const databaseDir = dirname(databasePath)
  for (const entry of await readdir(databaseDir).catch(() => [] as string[])) {
    if (entry.startsWith('.notesvc.db.') && entry.endsWith('.part')) await rm(join(databaseDir, entry), { force: true })
  }
  // the folders made for them, when nothing else is in them (rmdir refuses a folder that is not empty)
  for (const dir of [...folders].sort((a, b) => b.length - a.length)) {
    for (let d = dir; d.startsWith(media) && d !== root; d = dirname(d)) {
      if (!(await rmdir(d).then(() => true, () => false))) break
    }
  }
  return removed
}
