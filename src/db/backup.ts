import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { MIGRATIONS } from './migrations'
import { postgresMigrations } from './migrations-postgres'
import { PostgresStore, type Queryable } from './store'
import { withoutPassword } from './copy'

/**
 * The database half of `notesvc backup` and `notesvc restore` (src/backup/ does the rest: media,
 * manifest, checksums). One object per back end, chosen once from the configuration, so the rest
 * never asks which database it runs on.
 *
 * - SQLite: `VACUUM INTO` a temporary file, from a read transaction of its own (one consistent state
 *   while `serve` writes: WAL readers do not block writers), then the copy is opened to read what it
 *   holds (schema version, counts, the media it refers to) and checked with `PRAGMA integrity_check`.
 * - PostgreSQL: `pg_dump --format=custom` run with the snapshot of a REPEATABLE READ transaction
 *   (`pg_export_snapshot()`, `pg_dump --snapshot`), in which the counts and the media keys are read
 *   too: the dump and the manifest describe the same state. Restored with `pg_restore`.
 */

/** What a copied database holds, for the manifest and the media copy. */
export interface DatabaseSnapshot {
  schemaVersion: number
  counts: { notes: number; accounts: number }
  /** the storage keys of every upload whose file had arrived (uploads/<noteId>), less those retention removed */
  mediaKeys: string[]
}

export interface DatabaseBackup {
  /** `sqlite` or `postgres`, as the manifest names it */
  readonly backEnd: string
  /** the database's file name inside the backup folder */
  readonly fileName: string
  /** where the database is, for messages (a PostgreSQL URL without its password) */
  readonly source: string
  /** writes a consistent copy of the database to `path` (a temporary name the caller renames) */
  dump(path: string): Promise<DatabaseSnapshot>
  /** what to do instead of restoring here a backup of the other back end, `backEnd` */
  otherBackEnd(backEnd: string): string
  /** how to name an empty place to restore into, instead of an occupied one */
  readonly emptyTarget: string
  /** why the database cannot be restored into (it holds notesvc's data), or null when it is empty */
  occupied(): Promise<string | null>
  /** restores the copy at `path` (already verified) into the empty database, all or nothing */
  restore(path: string): Promise<void>
}

/** A backup or restore that cannot start or go on, for the reason its message gives with what to do. */
export class BackupRefused extends Error {}

/** The highest schema version this build knows. */
const LATEST_SCHEMA_VERSION = Math.max(...MIGRATIONS.map(m => m.version))

/** Schema 16 (retention) added `notes.media_removed_at`; a backup never migrates, so older schemas are read as they are. */
const MEDIA_REMOVED_SINCE = 16
/**
 * The recordings a backup copies: every upload whose file arrived, less those the retention policy
 * removed (their files are gone on purpose, not "deleted after the database was copied").
 */
const mediaKeysSql = (schemaVersion: number) => schemaVersion >= MEDIA_REMOVED_SINCE
  ? 'SELECT u.storage_key AS k FROM uploads u JOIN notes n ON n.id = u.note_id WHERE u.received_at IS NOT NULL AND n.media_removed_at IS NULL ORDER BY u.storage_key'
  : 'SELECT storage_key AS k FROM uploads WHERE received_at IS NOT NULL ORDER BY storage_key'
const COUNTS_SQL = 'SELECT (SELECT count(*) FROM notes) AS notes, (SELECT count(*) FROM accounts) AS accounts'
const VERSION_SQL = 'SELECT max(version) AS v FROM schema_migrations'

export function databaseBackup(config: { databaseUrl?: string; databasePath: string }, pgBin: (name: string) => string | null = name => Bun.which(name)): DatabaseBackup {
  return config.databaseUrl ? postgresBackup(config.databaseUrl, pgBin) : sqliteBackup(config.databasePath)
}

async function syncFile(path: string): Promise<void> {
  const f = await open(path, 'r+')
  try {
    await f.sync()
  } finally {
    await f.close()
  }
}

function sqliteBackup(databasePath: string): DatabaseBackup {
  return {
    backEnd: 'sqlite',
    fileName: 'notesvc.db',
    source: databasePath,
    otherBackEnd: () => 'this is a backup of a PostgreSQL installation (notesvc.pgdump); set NOTESVC_DATABASE_URL to an empty PostgreSQL database and run restore again',
    emptyTarget: 'set NOTESVC_DATA_DIR (or --data-dir) to a new folder',

    async dump(path) {
      if (!existsSync(databasePath)) {
        throw new BackupRefused(`there is no notesvc database at ${databasePath}; point NOTESVC_DATA_DIR (or --data-dir) at the data folder of the installation to back up`)
      }
      // Not openDatabase: a backup never migrates or analyzes the database it copies.
      const db = new Database(databasePath, { readwrite: true, create: false, strict: true })
      try {
        db.exec('PRAGMA busy_timeout = 5000')
        db.run('VACUUM INTO ?', [path])
      } finally {
        db.close()
      }
      await syncFile(path)
      return readSqliteCopy(path)
    },

    async occupied() {
      for (const suffix of ['', '-wal']) {
        if (existsSync(databasePath + suffix)) return `it holds a database (${databasePath + suffix})`
      }
      return null
    },

    async restore(path) {
      // written beside the database under a temporary name, checked, then renamed into place
      await mkdir(dirname(databasePath), { recursive: true })
      const temp = join(dirname(databasePath), `.notesvc.db.${crypto.randomUUID()}.part`)
      try {
        await Bun.write(temp, Bun.file(path))
        const copy = new Database(temp, { readwrite: true, create: false, strict: true })
        try {
          const check = copy.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map(r => r.integrity_check)
          if (check.join() !== 'ok') throw new BackupRefused(`the backup's database fails SQLite's integrity check (${check.slice(0, 3).join('; ')}); restore an older backup`)
        } finally {
          copy.close()
        }
        await syncFile(temp)
        await rename(temp, databasePath)
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
    },
  }
}

/** Reads a copied SQLite database: its version, counts and media, after checking its integrity. */
function readSqliteCopy(path: string): DatabaseSnapshot {
  const db = new Database(path, { readwrite: true, create: false, strict: true })
  try {
    const check = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map(r => r.integrity_check)
    if (check.join() !== 'ok') throw new Error(`the copy of the database fails SQLite's integrity check (${check.slice(0, 3).join('; ')}); the database itself may be damaged: run PRAGMA integrity_check on it`)
    const counts = db.query<{ notes: number; accounts: number }, []>(COUNTS_SQL).get()!
    const schemaVersion = db.query<{ v: number | null }, []>(VERSION_SQL).get()?.v ?? 0
    return {
      schemaVersion,
      counts: { notes: counts.notes, accounts: counts.accounts },
      mediaKeys: db.query<{ k: string }, []>(mediaKeysSql(schemaVersion)).all().map(r => r.k),
    }
  } finally {
    // VACUUM INTO keeps the source's journal mode in the header; a copy is one self-contained file
    db.exec('PRAGMA journal_mode = DELETE')
    db.close()
  }
}

/** The URL without its password, and the password for PGPASSWORD (not on a command line `ps` shows). */
function pgConnection(url: string): { url: string; env: Record<string, string> } {
  const u = new URL(url)
  const password = decodeURIComponent(u.password)
  u.password = ''
  return { url: u.toString(), env: password ? { PGPASSWORD: password } : {} }
}

async function runTool(cmd: string[], env: Record<string, string>, what: string): Promise<void> {
  const proc = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'pipe' })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`)
}

function postgresBackup(databaseUrl: string, pgBin: (name: string) => string | null): DatabaseBackup {
  const shown = withoutPassword(databaseUrl)
  const tool = (name: 'pg_dump' | 'pg_restore') => {
    const path = pgBin(name)
    if (!path) {
      throw new BackupRefused(`${name} is not on PATH; it comes with PostgreSQL's client programs (Debian: apt-get install postgresql-client, of the server's major version or newer), install it and run this again`)
    }
    return path
  }
  const withStore = async <T>(fn: (store: PostgresStore) => Promise<T>): Promise<T> => {
    const store = new PostgresStore(databaseUrl, { max: 1 })
    try {
      return await fn(store)
    } finally {
      await store.close()
    }
  }

  return {
    backEnd: 'postgres',
    fileName: 'notesvc.pgdump',
    source: shown,
    otherBackEnd: () => 'this is a backup of a SQLite installation, and NOTESVC_DATABASE_URL names a PostgreSQL database; restore it into a data folder without NOTESVC_DATABASE_URL, then move it with notesvc db copy --to postgres://…',
    emptyTarget: 'set NOTESVC_DATABASE_URL to a new empty database (createdb) and NOTESVC_DATA_DIR (or --data-dir) to a new folder',

    async dump(path) {
      const pgDump = tool('pg_dump')
      const conn = pgConnection(databaseUrl)
      return withStore(store => store.transaction(async (tx: Queryable) => {
        await tx.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY')
        const snapshot = (await tx.get<{ s: string }>('SELECT pg_export_snapshot() AS s'))!.s
        const version = await tx.get<{ v: number | null }>(VERSION_SQL).catch(() => null)
        if (!version?.v) throw new BackupRefused(`the PostgreSQL database ${shown} holds no notesvc schema; point NOTESVC_DATABASE_URL at the installation's database`)
        const counts = (await tx.get<{ notes: string; accounts: string }>(COUNTS_SQL))!
        const mediaKeys = (await tx.all<{ k: string }>(mediaKeysSql(Number(version.v)))).map(r => r.k)
        // the transaction stays open until pg_dump is done: the snapshot lives as long as it does
        await runTool([pgDump, '--format=custom', `--snapshot=${snapshot}`, '--no-owner', '--file', path, '--dbname', conn.url], conn.env, `pg_dump of ${shown}`)
        await syncFile(path)
        return { schemaVersion: Number(version.v), counts: { notes: Number(counts.notes), accounts: Number(counts.accounts) }, mediaKeys }
      }))
    },

    async occupied() {
      const tables = await withStore(store => store.all<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('schema_migrations', 'notes', 'accounts') ORDER BY 1",
      ))
      return tables.length > 0 ? `the PostgreSQL database ${shown} already has notesvc's tables (${tables.map(t => t.name).join(', ')})` : null
    },

    async restore(path) {
      const pgRestore = tool('pg_restore')
      const conn = pgConnection(databaseUrl)
      // one transaction: a failed restore leaves the database as empty as it was
      await runTool([pgRestore, '--single-transaction', '--exit-on-error', '--no-owner', '--dbname', conn.url, path], conn.env, `pg_restore into ${shown}`)
    },
  }
}

/** The highest schema version this build knows on the configured back end. */
export function latestSchemaVersion(config: { databaseUrl?: string }): number {
  return config.databaseUrl ? Math.max(...postgresMigrations().map(m => m.version)) : LATEST_SCHEMA_VERSION
}
