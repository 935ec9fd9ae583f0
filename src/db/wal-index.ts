import type { Database } from 'bun:sqlite'
import { fstatSync, openSync, readSync, statSync } from 'node:fs'
import { mappedHeader } from './wal-index-map'

/**
 * Whether anything was committed to a SQLite database since a moment, told with one pread(2) and no statement.
 *
 * In WAL mode every connection to a database, in every process, shares the WAL index: the `-shm` file
 * beside the database, which SQLite maps into memory. Its header (https://www.sqlite.org/walformat.html,
 * "The WAL-Index Format") is rewritten by every commit that changes the database, before the commit
 * returns: the change counter, the last valid frame and a checksum over the header all move. Reading
 * a few words of it through a descriptor of our own (walIndexFiles) costs one system call; any statement
 * that reads a table costs a read transaction instead (on Linux two fcntl() locks and an fstat(), a few
 * microseconds: what a cached GET /v1/notes spent most of its database time on).
 *
 * The header is read the way SQLite's readers rely on it: a writer updates the second copy, then the
 * first; a commit is complete (visible to a new read transaction) only once the first copy is written.
 * So when the first copy's fingerprint is the one seen before a statement read a value, no commit has
 * happened since and the value still holds. A torn read (during a writer's copy) gives a fingerprint
 * never seen before: a miss, never a false "unchanged". Checkpoints and WAL restarts also move the
 * header without changing any data: a harmless miss.
 *
 * SQLite keeps the file (it only truncates it when a connection opens it with no other connection
 * anywhere) while a connection of this process is open; the value is used only while the store's
 * connection is open and free.
 */

/** `iVersion` of the WAL-index header SQLite has written since 3.7.0 */
const WALINDEX_VERSION = 3007000
/** word offsets in the first copy of the header (u32 words) */
const I_VERSION = 0
const I_CHANGE = 2
const IS_INIT = 3 // low byte of the word: isInit
const MX_FRAME = 4
const A_CKSUM_0 = 10
const A_CKSUM_1 = 11

/**
 * Descriptors of WAL-index files, one per file (device and inode), opened once and never closed.
 *
 * Why not a mapping (Bun.mmap), and why never closed: mapping a file opens a descriptor of it and
 * closes it, and closing any descriptor of a file drops every POSIX lock the process holds on that
 * file (fcntl semantics), SQLite's own included. Mapped while SQLite had the -shm open, the server lost
 * its shared lock on the WAL index's DMS byte; the next process to open the database (`notesvc backup`,
 * `keys create`, a worker) then took itself for the first one, truncated the -shm under the running
 * server and rebuilt it: the server died of SIGBUS on its mappings (test/system/backup.test.ts found
 * it). A descriptor that stays open drops nothing; each read is one pread(2) of 48 bytes.
 */
const walIndexFiles = new Map<string, WalIndexFile>()

/** One WAL-index file of this process: its descriptor and the last header read from it. */
interface WalIndexFile {
  fd: number
  /** the first words of the file as mapped (wal-index-map.ts), read as memory; null: read with pread(2) */
  mapped: Uint32Array | null
  words: Uint32Array
  bytes: Uint8Array
  /** the hold (atOneWalIndexRead) during which `words` were read, or 0 when read outside one */
  readInHold: number
}

/** the hold under way (atOneWalIndexRead), or 0 */
let hold = 0
let holds = 0

function walIndexFile(db: Database): WalIndexFile | null {
  try {
    if (db.filename === '' || db.filename === ':memory:') return null
    const mode = db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()?.journal_mode
    if (mode !== 'wal') return null
    const path = `${db.filename}-shm`
    const { dev, ino } = statSync(path)
    let file = walIndexFiles.get(`${dev}:${ino}`)
    if (file === undefined) {
      const words = new Uint32Array(12)
      const fd = openSync(path, 'r')
      file = { fd, mapped: mappedHeader(fd, fstatSync(fd).size), words, bytes: new Uint8Array(words.buffer), readInHold: 0 }
      walIndexFiles.set(`${dev}:${ino}`, file)
    }
    return file
  } catch {
    return null // no -shm file (yet)
  }
}

/** Reads the first words of the database's WAL index; null when there is none to read. */
function walIndexReader(db: Database): (() => Uint32Array) | null {
  const file = walIndexFile(db)
  if (!file) return null
  return () => {
    if (hold !== 0 && file.readInHold === hold) return file.words
    file.readInHold = hold
    if (file.mapped !== null) {
      file.words.set(file.mapped)
      return file.words
    }
    // a short read (a WAL index being rebuilt) gives version 0: a miss, never "unchanged"
    if (readSync(file.fd, file.bytes, 0, 48, 0) < 48) file.words.fill(0)
    return file.words
  }
}

/**
 * `fn` made to read each WAL-index header once while it runs, however many commit counters
 * (changeStamp's, untilNextCommit's) ask: the first read is taken again by the others, so a request
 * that checks a key and a kept page under two stamps costs one pread(2) instead of two (each about
 * 1-3 µs on a shared 2-core machine, a tenth of the kept first page: bench/README.md). What `fn` reads
 * is then as of that one moment, as for any request answered at once from memory. `fn` must not
 * await: the hold ends when it returns.
 */
export function atOneWalIndexRead<A, T>(fn: (arg: A) => T): (arg: A) => T {
  return arg => {
    if (hold !== 0) return fn(arg)
    hold = ++holds
    try {
      return fn(arg)
    } finally {
      hold = 0
    }
  }
}

/**
 * A count of the commits seen in the WAL-index header: it moves whenever the header differs from the
 * last call's, so an unchanged count means nothing was committed in between, by any connection of any
 * process. null without a WAL index to watch (`:memory:`, another journal mode); with a header in an
 * unknown format it moves on every call (nothing is taken as unchanged).
 */
export function commitCounter(db: Database): (() => number) | null {
  const read = walIndexReader(db)
  if (!read) return null
  let count = 0
  let change = 0
  let frame = 0
  let sum0 = 0
  let sum1 = 0
  return () => {
    const header = read()
    if (header[I_VERSION] !== WALINDEX_VERSION || (header[IS_INIT]! & 0xff) !== 1) return ++count
    const c = header[I_CHANGE]!
    const f = header[MX_FRAME]!
    const s0 = header[A_CKSUM_0]!
    const s1 = header[A_CKSUM_1]!
    if (count === 0 || c !== change || f !== frame || s0 !== sum0 || s1 !== sum1) {
      change = c
      frame = f
      sum0 = s0
      sum1 = s1
      count++
    }
    return count
  }
}

/**
 * `read` remembered until the next commit to the database by any connection: while the WAL-index
 * header shows no commit since the last value was read, that value is returned without running a
 * statement. Without a WAL index to watch every call reads. An undefined value is never remembered.
 *
 * Call it only where `read` would run at once, outside any transaction (uncommitted writes of this
 * connection do not move the header).
 */
export function untilNextCommit<T>(db: Database, read: () => T | undefined): () => T | undefined {
  const commits = commitCounter(db)
  if (!commits) return read
  let value: T | undefined
  let at = 0
  return () => {
    // the header first, then the statement: a value is kept under a header at least as old as it
    const now = commits()
    if (value !== undefined && now === at) return value
    value = read()
    at = now
    return value
  }
}
