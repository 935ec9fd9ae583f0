import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../helpers/postgres'

const skip = postgresUnavailable()
if (skip) console.log(`skipping PostgreSQL tests: ${skip}`)

describe.skipIf(skip !== null)('a private PostgreSQL cluster for the tests', () => {
  let pg: PostgresCluster
  beforeAll(async () => {
    pg = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await pg?.stop()
  })

  test('answers on loopback, and a fresh database keeps what is written to it', async () => {
    const url = await pg.createDatabase('harness_check')
    const sql = new Bun.SQL(url)
    try {
      await sql`CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL)`
      await sql`INSERT INTO t ${sql([{ id: 1, name: 'one' }, { id: 2, name: 'two' }])}`
      expect(await sql`SELECT id, name FROM t ORDER BY id`).toEqual([{ id: 1, name: 'one' }, { id: 2, name: 'two' }])
      const [{ version }] = await sql`SHOW server_version_num`.then(r => r.map((x: { server_version_num: string }) => ({ version: Number(x.server_version_num) })))
      expect(version).toBeGreaterThanOrEqual(130000)
    } finally {
      await sql.close()
    }
  })
})
