import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { asDatabaseUnavailable, DatabaseUnavailableError, numberPlaceholders, openStore, PostgresStore, SqliteStore, type Store } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'
import { freePort } from '../helpers/process'

/**
 * The data-access layer, one table of tests and two stores: an embedded SQLite file and a private
 * PostgreSQL cluster. What a repository relies on must hold on both.
 */

const pgSkip = postgresUnavailable()
if (pgSkip) console.log(`PostgreSQL store tests skipped: ${pgSkip}`)

let pg: PostgresCluster | undefined
const dir = mkdtempSync(join(tmpdir(), 'notesvc-store-'))
beforeAll(async () => {
  if (!pgSkip) pg = await startPostgres()
}, 60_000)
afterAll(async () => {
  await pg?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const backEnds: { name: string; skip: boolean; open: (db: string) => Promise<Store> }[] = [
  { name: 'sqlite', skip: false, open: async db => openStore(join(dir, `${db}.db`)) },
  { name: 'postgres', skip: pgSkip !== null, open: async db => openStore(await pg!.createDatabase(db)) },
]

for (const b of backEnds) {
  describe.skipIf(b.skip)(`store on ${b.name}`, () => {
    let store: Store
    beforeAll(async () => {
      store = await b.open(`store_${b.name}`)
      await store.run('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, note TEXT)')
    })
    afterAll(async () => {
      await store?.close()
    })

    test('values go in through ? placeholders and come back as they went in; a ? inside a literal is text', async () => {
      expect(await store.run('INSERT INTO items (id, n, note) VALUES (?, ?, ?)', ['a', 1, null])).toBe(1)
      expect(await store.run("INSERT INTO items (id, n, note) VALUES (?, ?, 'what?')", ['b', 2])).toBe(1)
      expect(await store.all('SELECT id, n, note FROM items ORDER BY id')).toEqual([{ id: 'a', n: 1, note: null }, { id: 'b', n: 2, note: 'what?' }])
      expect(await store.get('SELECT n FROM items WHERE id = ?', ['b'])).toEqual({ n: 2 })
      expect(await store.get('SELECT n FROM items WHERE id = ?', ['nope'])).toBeNull()
      expect(await store.run('UPDATE items SET n = n + 10 WHERE n < ?', [100])).toBe(2)
    })

    test('a transaction that throws leaves nothing behind; one that returns is kept', async () => {
      await expect(store.transaction(async tx => {
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['c', 3])
        throw new Error('changed my mind')
      })).rejects.toThrow('changed my mind')
      expect(await store.get('SELECT id FROM items WHERE id = ?', ['c'])).toBeNull()
      expect(await store.transaction(async tx => tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['c', 3]))).toBe(1)
      expect(await store.get('SELECT n FROM items WHERE id = ?', ['c'])).toEqual({ n: 3 })
    })

    test('concurrent read-then-write transactions lose no update (40 increments of one counter)', async () => {
      await store.run('INSERT INTO items (id, n) VALUES (?, ?)', ['counter', 0])
      await Promise.all(Array.from({ length: 40 }, () => store.transaction(async tx => {
        const row = b.name === 'postgres'
          ? await tx.get<{ n: number }>('SELECT n FROM items WHERE id = ? FOR UPDATE', ['counter'])
          : await tx.get<{ n: number }>('SELECT n FROM items WHERE id = ?', ['counter'])
        await tx.run('UPDATE items SET n = ? WHERE id = ?', [row!.n + 1, 'counter'])
      })))
      expect(await store.get('SELECT n FROM items WHERE id = ?', ['counter'])).toEqual({ n: 40 })
    })

    test('a statement from outside an open transaction does not see its uncommitted rows', async () => {
      let inside!: () => void
      const entered = new Promise<void>(r => (inside = r))
      let finish!: () => void
      const done = new Promise<void>(r => (finish = r))
      const tx = store.transaction(async t => {
        await t.run('INSERT INTO items (id, n) VALUES (?, ?)', ['pending', 1])
        inside()
        await done
      })
      await entered
      const outside = store.get('SELECT id FROM items WHERE id = ?', ['pending'])
      const seen = await Promise.race([outside, Bun.sleep(50).then(() => 'still waiting' as const)])
      finish()
      await tx
      // SQLite (one connection) waits for the transaction; PostgreSQL (another connection) does not see it
      expect(seen === 'still waiting' || seen === null).toBe(true)
      expect(await outside).toEqual(b.name === 'sqlite' ? { id: 'pending' } : null)
    })

    test('inside a transaction the store itself runs in it: a nested transaction joins, a throw rolls back both', async () => {
      // what a service relies on: a repository called inside store.transaction() writes in that transaction
      await expect(store.transaction(async () => {
        await store.run('INSERT INTO items (id, n) VALUES (?, ?)', ['ambient', 1])
        expect(store.inTransaction).toBe(true)
        expect(await store.get('SELECT n FROM items WHERE id = ?', ['ambient'])).toEqual({ n: 1 })
        await store.transaction(async () => {
          await store.run('UPDATE items SET n = ? WHERE id = ?', [2, 'ambient'])
        })
        expect(await store.get('SELECT n FROM items WHERE id = ?', ['ambient'])).toEqual({ n: 2 })
        throw new Error('undo all of it')
      })).rejects.toThrow('undo all of it')
      expect(store.inTransaction).toBe(false)
      expect(await store.get('SELECT id FROM items WHERE id = ?', ['ambient'])).toBeNull()
      await store.transaction(async () => {
        await store.run('INSERT INTO items (id, n) VALUES (?, ?)', ['ambient', 3])
      })
      expect(await store.get('SELECT n FROM items WHERE id = ?', ['ambient'])).toEqual({ n: 3 })
    })

    test('what its connections are doing, for the metrics: a transaction counted while open, a query while awaited (PostgreSQL)', async () => {
      // PostgreSQL: the pool's size (openStore's default, 10); SQLite: its one connection (no read thread here)
      expect(store.activity()).toEqual({ maxConnections: b.name === 'postgres' ? 10 : 1, openTransactions: 0, queriesInFlight: 0 })
      await store.transaction(async () => {
        await store.get('SELECT 1 AS one')
        expect(store.activity().openTransactions).toBe(1)
      })
      expect(store.activity().openTransactions).toBe(0)
      if (b.name === 'postgres') {
        const slow = store.get('SELECT pg_sleep(0.3)')
        expect(store.activity().queriesInFlight).toBe(1)
        await slow
        expect(store.activity().queriesInFlight).toBe(0)
      }
      // a transaction that throws is no longer counted either
      await expect(store.transaction(async () => { throw new Error('no') })).rejects.toThrow('no')
      expect(store.activity()).toMatchObject({ openTransactions: 0, queriesInFlight: 0 })
    })

    test.skipIf(b.name !== 'postgres')('PostgreSQL: statements run through customPlanned are planned for their values every time, on their own connections or in the caller\'s transaction; the pool\'s are not', async () => {
      const pgStore = store as PostgresStore
      const mode = async (q: { get<T>(sql: string): Promise<T | null> }) => (await q.get<{ plan_cache_mode: string }>('SHOW plan_cache_mode'))!.plan_cache_mode
      expect(await pgStore.customPlanned(mode)).toBe('force_custom_plan')
      expect(await mode(store)).toBe('auto')
      // inside a transaction: on its connection, from then until it ends
      expect(await store.transaction(async tx => [await mode(tx), await pgStore.customPlanned(mode), await mode(tx)])).toEqual(['auto', 'force_custom_plan', 'force_custom_plan'])
      expect(await mode(store)).toBe('auto')
    })
  })
}

describe('a database that cannot be reached is a DatabaseUnavailableError; any other failure stays as it was', () => {
  test('what each driver\'s errors are classified as (the Retry-After seconds, or null)', () => {
    const sqlite = (errno: number, code: string) => Object.assign(new Error(code), { name: 'SQLiteError', errno, code })
    const postgres = (code: string, errno?: string) => Object.assign(new Error(code), { name: 'PostgresError', code, errno })
    const cases: [string, unknown, number | null][] = [
      ['SQLITE_BUSY (database is locked)', sqlite(5, 'SQLITE_BUSY'), 1],
      ['SQLITE_BUSY_SNAPSHOT', sqlite(517, 'SQLITE_BUSY_SNAPSHOT'), 1],
      ['SQLITE_LOCKED', sqlite(6, 'SQLITE_LOCKED'), 1],
      ['SQLITE_IOERR_READ', sqlite(266, 'SQLITE_IOERR_READ'), 5],
      ['SQLITE_FULL', sqlite(13, 'SQLITE_FULL'), 5],
      ['SQLITE_CANTOPEN', sqlite(14, 'SQLITE_CANTOPEN'), 5],
      ['SQLITE_CONSTRAINT_UNIQUE', sqlite(2067, 'SQLITE_CONSTRAINT_UNIQUE'), null],
      ['SQLITE_ERROR (no such table)', sqlite(1, 'SQLITE_ERROR'), null],
      ['connection refused', postgres('ERR_POSTGRES_CONNECTION_REFUSED'), 5],
      ['connection closed', postgres('ERR_POSTGRES_CONNECTION_CLOSED'), 5],
      ['connection timeout (no connection in time)', postgres('ERR_POSTGRES_CONNECTION_TIMEOUT'), 5],
      ['server shutting down (57P01)', postgres('ERR_POSTGRES_SERVER_ERROR', '57P01'), 5],
      ['server starting up (57P03)', postgres('ERR_POSTGRES_SERVER_ERROR', '57P03'), 5],
      ['too many connections (53300)', postgres('ERR_POSTGRES_SERVER_ERROR', '53300'), 5],
      ['connection failure (08006)', postgres('ERR_POSTGRES_SERVER_ERROR', '08006'), 5],
      ['unique violation (23505)', postgres('ERR_POSTGRES_SERVER_ERROR', '23505'), null],
      ['NUL in text (22021)', postgres('ERR_POSTGRES_SERVER_ERROR', '22021'), null],
      ['syntax error', postgres('ERR_POSTGRES_SYNTAX_ERROR', '42601'), null],
      ['a socket refused', Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }), 5],
      ['a bug', new TypeError('x is undefined'), null],
      ['not an error', 'text', null],
    ]
    const seen = cases.map(([name, err]) => [name, asDatabaseUnavailable(err)?.retryAfterSeconds ?? null])
    expect(seen).toEqual(cases.map(([name, , expected]) => [name, expected]))
    const already = new DatabaseUnavailableError('down', 3)
    expect(asDatabaseUnavailable(already)).toBe(already)
  })

  test('SQLite: a write while another connection holds the write lock past the busy timeout; reads still answer', async () => {
    const path = join(dir, 'busy.db')
    const store = openStore(path) as SqliteStore
    store.db.exec('PRAGMA journal_mode = WAL')
    store.db.exec('PRAGMA busy_timeout = 50')
    await store.run('CREATE TABLE items (id TEXT PRIMARY KEY)')
    const other = new Database(path)
    other.exec('BEGIN IMMEDIATE')
    try {
      const failed = await store.transaction(tx => tx.run('INSERT INTO items (id) VALUES (?)', ['a'])).catch(e => e)
      expect(failed).toBeInstanceOf(DatabaseUnavailableError)
      expect(failed.retryAfterSeconds).toBe(1)
      expect(failed.cause.code).toBe('SQLITE_BUSY')
      expect(await store.run('INSERT INTO items (id) VALUES (?)', ['b']).catch(e => e)).toBeInstanceOf(DatabaseUnavailableError)
      expect(await store.all('SELECT id FROM items')).toEqual([])
      expect(await store.reachable(1000)).toBe(true)
    } finally {
      other.exec('ROLLBACK')
      other.close()
    }
    await store.transaction(tx => tx.run('INSERT INTO items (id) VALUES (?)', ['a']))
    expect(await store.all('SELECT id FROM items')).toEqual([{ id: 'a' }])
    await store.close()
  })

  test.skipIf(pgSkip !== null)('PostgreSQL: nothing listening is unreachable, at once', async () => {
    const store = new PostgresStore(`postgres://postgres@127.0.0.1:${await freePort()}/nowhere`, { max: 1 })
    try {
      const failed = (await store.get('SELECT 1').catch(e => e)) as DatabaseUnavailableError
      expect(failed).toBeInstanceOf(DatabaseUnavailableError)
      expect(failed.retryAfterSeconds).toBe(5)
      expect(await store.transaction(async tx => tx.get('SELECT 1')).catch(e => e)).toBeInstanceOf(DatabaseUnavailableError)
      expect(await store.reachable(2000)).toBe(false)
    } finally {
      await store.close()
    }
  })

  test.skipIf(pgSkip !== null)('PostgreSQL: a transaction whose connection is cut leaves nothing, and the store answers again', async () => {
    const store = openStore(await pg!.createDatabase('store_cut'))
    const admin = new Bun.SQL(pg!.url, { max: 1 })
    try {
      await store.run('CREATE TABLE items (id TEXT PRIMARY KEY)')
      const failed = await store.transaction(async tx => {
        await tx.run('INSERT INTO items (id) VALUES (?)', ['half'])
        const { pid } = (await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid'))!
        await admin.unsafe('SELECT pg_terminate_backend($1)', [pid])
        await tx.run('INSERT INTO items (id) VALUES (?)', ['other half'])
      }).catch(e => e)
      expect(failed).toBeInstanceOf(DatabaseUnavailableError)
      expect(await store.reachable(5000)).toBe(true)
      expect(await store.all('SELECT id FROM items')).toEqual([])
    } finally {
      await admin.close()
      await store.close()
    }
  })
})

test('numbering placeholders for PostgreSQL skips literals, quoted names and comments', () => {
  expect(numberPlaceholders(`SELECT "a?" FROM t WHERE x = ? AND y = 'why?' -- and ?\nAND z IN (?, ?)`))
    .toBe(`SELECT "a?" FROM t WHERE x = $1 AND y = 'why?' -- and ?\nAND z IN ($2, $3)`)
})
