/**
 * Long reads off the request thread (src/db/read-worker.ts, SqliteStore.allAside): the same rows as
 * the connection itself gives, while the event loop goes on; inside a transaction, on the connection
 * (which alone sees the transaction's writes); a thread that cannot run leaves the reads to the
 * connection.
 */
import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { ReadWorker } from '../../src/db/read-worker'
import { SqliteStore } from '../../src/db/store'

const dirs: string[] = []
const stores: SqliteStore[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function fileStore(threadPath?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'notesvc-read-thread-'))
  dirs.push(dir)
  const path = join(dir, 'notesvc.db')
  const store = new SqliteStore(openDatabase(path))
  store.useReadThread(new ReadWorker(threadPath ?? path))
  stores.push(store)
  return store
}

// about 100 ms of work for SQLite, in one statement
const SLOW = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) AS c FROM n'

/** Runs `read` while a 1-ms interval counts the turns of the event loop it lets happen. */
async function turnsDuring(read: () => Promise<unknown>): Promise<{ result: unknown; turns: number }> {
  let turns = 0
  const timer = setInterval(() => turns++, 1)
  await Bun.sleep(0)
  turns = 0
  const result = await read()
  clearInterval(timer)
  return { result, turns }
}

test('a long read on the thread gives the same rows, and the event loop runs while it does', async () => {
  const store = fileStore()
  const aside = await turnsDuring(() => store.allAside<{ c: number }>(SLOW))
  const here = await turnsDuring(() => store.all<{ c: number }>(SLOW))
  expect(aside.result).toEqual([{ c: 3000000 }])
  expect(here.result).toEqual(aside.result)
  // on the connection the statement holds the thread: no timer fires until it ends
  expect(here.turns).toBe(0)
  expect(aside.turns).toBeGreaterThan(5)
  // rows with parameters and booleans, as the connection would bind them
  expect(await store.allAside<{ a: number; b: string }>('SELECT ? AS a, ? AS b', [true, 'x'])).toEqual(await store.all('SELECT ? AS a, ? AS b', [true, 'x']))
})

test('the metrics see the thread: a second connection once started, and its reads in flight until answered', async () => {
  const store = fileStore()
  // the thread starts with the first read
  expect(store.activity()).toEqual({ maxConnections: 1, openTransactions: 0, queriesInFlight: 0 })
  const reading = store.allAside(SLOW)
  expect(store.activity()).toEqual({ maxConnections: 2, openTransactions: 0, queriesInFlight: 1 })
  await reading
  expect(store.activity()).toEqual({ maxConnections: 2, openTransactions: 0, queriesInFlight: 0 })
})

test('inside a transaction the read is made on the connection, which alone sees the transaction’s rows', async () => {
  const store = fileStore()
  await store.run('CREATE TABLE probe (v TEXT)')
  const seen = await store.transaction(async tx => {
    await tx.run("INSERT INTO probe VALUES ('uncommitted')")
    return store.allAside<{ v: string }>('SELECT v FROM probe')
  })
  expect(seen).toEqual([{ v: 'uncommitted' }])
  // committed: the thread's connection sees it too
  expect(await store.allAside<{ v: string }>('SELECT v FROM probe')).toEqual([{ v: 'uncommitted' }])
})

test('a thread that cannot open the database leaves the reads to the connection', async () => {
  const store = fileStore('/nonexistent/folder/notesvc.db')
  // the first read learns that the thread failed, and is made here
  expect(await store.allAside<{ x: number }>('SELECT 7 AS x')).toEqual([{ x: 7 }])
  // from then on every read is made here at once
  const { result, turns } = await turnsDuring(() => store.allAside<{ c: number }>(SLOW))
  expect(result).toEqual([{ c: 3000000 }])
  expect(turns).toBe(0)
})

test('a statement that fails on the thread fails the read with its error', async () => {
  const store = fileStore()
  await expect(store.allAside('SELECT * FROM no_such_table')).rejects.toThrow('no such table')
})
