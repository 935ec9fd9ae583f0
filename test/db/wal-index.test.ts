import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { atOneWalIndexRead, untilNextCommit } from '../../src/db/wal-index'
import { mappedHeader } from '../../src/db/wal-index-map'
import { run, tempDir } from '../helpers/process'

/** A database file with a table t, and a counted read of its row count remembered until the next commit. */
function counted(path: string) {
  const db = openDatabase(path)
  db.exec('CREATE TABLE IF NOT EXISTS t (x INTEGER)')
  let reads = 0
  const count = untilNextCommit(db, () => {
    reads++
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n
  })
  return { db, count, reads: () => reads }
}

describe('untilNextCommit (the WAL-index header)', () => {
  test('a value is read once while nothing is committed, and again after a commit of this connection', () => {
    const d = tempDir()
    try {
      const { db, count, reads } = counted(join(d.path, 'x.db'))
      expect(count()).toBe(0)
      expect(count()).toBe(0)
      expect(count()).toBe(0)
      expect(reads()).toBe(1)
      db.exec('INSERT INTO t VALUES (1)')
      expect(count()).toBe(1)
      expect(reads()).toBe(2)
      // a write that changes no byte commits nothing: the value stays
      db.exec('UPDATE t SET x = x')
      expect(count()).toBe(1)
      db.close()
    } finally {
      d.remove()
    }
  })

  test('a commit by another connection of this process is seen on the very next call', () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const { db, count } = counted(path)
      const other = new Database(path)
      expect(count()).toBe(0)
      for (let i = 1; i <= 20; i++) {
        other.exec('INSERT INTO t VALUES (1)')
        expect(count()).toBe(i)
      }
      other.close()
      db.close()
    } finally {
      d.remove()
    }
  })

  test('a commit by another process is seen on the very next call, across WAL restarts and checkpoints', async () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const { db, count } = counted(path)
      expect(count()).toBe(0)
      for (let i = 1; i <= 5; i++) {
        // the other process checkpoints as it closes: the next commit restarts the WAL from its start
        const r = await run([process.execPath, '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(path)}); d.exec('PRAGMA busy_timeout = 5000'); d.exec('INSERT INTO t VALUES (1)'); d.close()`])
        expect(r.stderr).toBe('')
        expect(count()).toBe(i)
        db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
        expect(count()).toBe(i)
      }
      db.close()
    } finally {
      d.remove()
    }
  })

  // While a process has the database open, SQLite holds a shared lock on byte 128 (the "DMS" byte) of
  // the -shm file; a process that finds no such lock takes itself for the first, truncates the -shm and
  // rebuilds it. Watching the WAL index through a mapping (Bun.mmap opens and closes the file) dropped
  // that lock, and `notesvc backup` run beside serve truncated the -shm under it: serve died of SIGBUS.
  test.skipIf(process.platform !== 'linux')('watching the WAL index keeps SQLite\'s lock on it, so another process never rebuilds it under this one', () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const { db, count } = counted(path)
      count()
      const inode = statSync(`${path}-shm`).ino
      const locks = readFileSync('/proc/locks', 'utf8').split('\n').filter(l => l.includes(`:${inode} `) && l.includes(` ${process.pid} `))
      expect(locks.map(l => l.trim().split(/\s+/).slice(1, 4).concat(l.trim().split(/\s+/).slice(-2)).join(' '))).toEqual(['POSIX ADVISORY READ 128 128'])
      db.close()
    } finally {
      d.remove()
    }
  })

  // The header is read from a mapping of the -shm (no system call per request); a mapping of the wrong
  // bytes, or a private copy that does not follow the file, would make the server miss commits.
  test.skipIf(process.platform !== 'linux')('the mapped header is the file\'s first 48 bytes, and follows each commit', () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const { db } = counted(path)
      const fd = openSync(`${path}-shm`, 'r')
      const mapped = mappedHeader(fd, statSync(`${path}-shm`).size)
      expect(mapped).not.toBeNull()
      const fromFile = () => {
        const b = new Uint32Array(12)
        readSync(fd, new Uint8Array(b.buffer), 0, 48, 0)
        return [...b]
      }
      const before = [...mapped!]
      expect(before).toEqual(fromFile())
      db.exec('INSERT INTO t VALUES (1)')
      expect([...mapped!]).toEqual(fromFile())
      expect([...mapped!]).not.toEqual(before)
      expect(mappedHeader(fd, 10)).toBeNull()
      closeSync(fd)
      db.close()
    } finally {
      d.remove()
    }
  })

  test('without a WAL index (an in-memory database) every call reads', () => {
    const db = openDatabase(':memory:')
    db.exec('CREATE TABLE t (x INTEGER)')
    let reads = 0
    const count = untilNextCommit(db, () => {
      reads++
      return db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n
    })
    expect(count()).toBe(0)
    expect(count()).toBe(0)
    expect(reads).toBe(2)
  })
})

describe('atOneWalIndexRead (one header read for every counter of a request)', () => {
  test('inside, every counter answers as of the first read; the next call outside sees the commit made meanwhile', () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const first = counted(path)
      const second = counted(path)
      const other = new Database(path)
      expect([first.count(), second.count()]).toEqual([0, 0])
      const answer = atOneWalIndexRead((commitInBetween: boolean) => {
        const a = first.count()
        if (commitInBetween) other.exec('INSERT INTO t VALUES (1)')
        // the second counter reads no header of its own: what it remembers still holds as of the first read
        return [a, second.count()]
      })
      expect(answer(true)).toEqual([0, 0])
      expect([first.count(), second.count()]).toEqual([1, 1])
      // without a commit in between, a request's counters agree, and later calls still see later commits
      expect(answer(false)).toEqual([1, 1])
      other.exec('INSERT INTO t VALUES (2)')
      expect(answer(false)).toEqual([2, 2])
      other.close()
      first.db.close()
      second.db.close()
    } finally {
      d.remove()
    }
  })
})
