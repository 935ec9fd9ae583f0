import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { numberPlaceholders, openStore, type Store } from '../../src/db/store'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'

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
  })
}

test('numbering placeholders for PostgreSQL skips literals, quoted names and comments', () => {
  expect(numberPlaceholders(`SELECT "a?" FROM t WHERE x = ? AND y = 'why?' -- and ?\nAND z IN (?, ?)`))
    .toBe(`SELECT "a?" FROM t WHERE x = $1 AND y = 'why?' -- and ?\nAND z IN ($2, $3)`)
})
