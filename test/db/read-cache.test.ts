import { SqliteStore } from '../../src/db/store'
import { describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database'
import { changeStamp, ReadCache } from '../../src/db/read-cache'
import { loadConfig } from '../../src/config'
import { systemClock } from '../../src/clock'
import { createIdGenerator } from '../../src/ids'
import { silentLogger } from '../../src/log'
import { createServices } from '../../src/services'
import { createApp } from '../../src/app'
import { run, tempDir } from '../helpers/process'

describe('ReadCache', () => {
  test('serves a cached value until this connection writes', () => {
    const db = openDatabase(':memory:')
    db.exec('CREATE TABLE t (x INTEGER)')
    const cache = new ReadCache<number>(changeStamp(db))
    const count = () => db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n
    let computed = 0
    const read = () => cache.get('n', () => { computed++; return count() })
    expect(read()).toBe(0)
    expect(read()).toBe(0)
    expect(computed).toBe(1)
    db.exec('INSERT INTO t VALUES (1)')
    expect(read()).toBe(1)
    expect(computed).toBe(2)
  })

  test('on a database file, sees a commit of this connection, another connection or another process at once', async () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const db = openDatabase(path)
      db.exec('CREATE TABLE t (x INTEGER)')
      const other = new Database(path)
      const cache = new ReadCache<number>(changeStamp(db))
      let computed = 0
      const read = () => cache.get('n', () => { computed++; return db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n })
      expect([read(), read()]).toEqual([0, 0])
      expect(computed).toBe(1)
      db.exec('INSERT INTO t VALUES (1)')
      expect(read()).toBe(1)
      other.exec('INSERT INTO t VALUES (1)')
      expect(read()).toBe(2)
      const r = await run([process.execPath, '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(path)}); d.exec('PRAGMA busy_timeout = 5000'); d.exec('INSERT INTO t VALUES (1)'); d.close()`])
      expect(r.stderr).toBe('')
      expect(read()).toBe(3)
      expect(read()).toBe(3)
      expect(computed).toBe(4)
      other.close()
      db.close()
    } finally {
      d.remove()
    }
  })

  test('sees a commit by another connection (another process) within a millisecond', async () => {
    const d = tempDir()
    try {
      const path = join(d.path, 'x.db')
      const db = openDatabase(path)
      db.exec('CREATE TABLE t (x INTEGER)')
      const other = new Database(path)
      const cache = new ReadCache<number>(changeStamp(db))
      const read = () => cache.get('n', () => db.query<{ n: number }, []>('SELECT count(*) AS n FROM t').get()!.n)
      expect(read()).toBe(0)
      other.exec('INSERT INTO t VALUES (1)')
      await Bun.sleep(2)
      expect(read()).toBe(1)
      other.close()
      db.close()
    } finally {
      d.remove()
    }
  })
})

describe('cached reads through the API stay true', () => {
  test('a key revoked by another process (the CLI) is refused on the next request, and a note it writes is listed', async () => {
    const d = tempDir()
    try {
      const config = loadConfig({ NOTESVC_DATA_DIR: d.path, NOTESVC_PUBLIC_URL: 'http://localhost' })
      const db = openDatabase(config.databasePath)
      const services = createServices({ config, store: new SqliteStore(db), clock: systemClock, ids: createIdGenerator() })
      const app = createApp({ config, clock: systemClock, ids: createIdGenerator(), log: silentLogger, services })
      const { key, info } = await services.accounts.createKey({ email: 'cache@example.com' })
      const call = async (path: string) => app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${key}` } }))
      expect((await call('/v1/notes')).status).toBe(200)
      expect((await call('/v1/notes')).status).toBe(200)

      // A second process: its own connection and services on the same file.
      const otherDb = openDatabase(config.databasePath)
      const other = createServices({ config, store: new SqliteStore(otherDb), clock: systemClock, ids: createIdGenerator() })
      const account = await services.accounts.requireAccount('cache@example.com')
      await other.notes.create({ accountId: account.id, sandbox: false }, { title: 'from elsewhere', content: 'x' })
      await Bun.sleep(2)
      const listed = await (await call('/v1/notes')).json() as { data: { title: string }[] }
      expect(listed.data.map(n => n.title)).toEqual(['from elsewhere'])

      await other.accounts.revokeKey(info.id)
      await Bun.sleep(2)
      expect((await call('/v1/notes')).status).toBe(401)
      otherDb.close()
      db.close()
    } finally {
      d.remove()
    }
  })

  test('a kept page is never served once another process changed a note, with no wait in between', async () => {
    const d = tempDir()
    try {
      const config = loadConfig({ NOTESVC_DATA_DIR: d.path, NOTESVC_PUBLIC_URL: 'http://localhost' })
      const db = openDatabase(config.databasePath)
      const services = createServices({ config, store: new SqliteStore(db), clock: systemClock, ids: createIdGenerator() })
      const app = createApp({ config, clock: systemClock, ids: createIdGenerator(), log: silentLogger, services })
      const { key, account } = await services.accounts.createKey({ email: 'cache@example.com' })
      await services.notes.create({ accountId: account.id, sandbox: false }, { title: 'title 0', content: 'x' })
      const titles = async () => ((await (await app.handle(new Request('http://localhost/v1/notes?limit=50', { headers: { authorization: `Bearer ${key}` } }))).json()) as { data: { title: string }[] }).data.map(n => n.title)
      for (let i = 1; i <= 5; i++) {
        expect(await titles()).toEqual([`title ${i - 1}`])
        expect(await titles()).toEqual([`title ${i - 1}`]) // kept
        // another process (plain SQL, as the CLI or a second serve would) renames the note
        const r = await run([process.execPath, '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(config.databasePath)}); d.exec('PRAGMA busy_timeout = 5000'); d.exec("UPDATE notes SET title = 'title ${i}'"); d.close()`])
        expect(r.stderr).toBe('')
        expect(await titles()).toEqual([`title ${i}`])
      }
      db.close()
    } finally {
      d.remove()
    }
  })
})
