import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { instanceSecret, lazySecret } from '../../src/db/settings'
import { PostgresStore } from '../../src/db/store'
import { backEnds, freshPostgresUrl } from '../helpers/backends'
import { closedAfterAll } from '../helpers/closing'

// the first PostgreSQL test of a file waits for the shared cluster to start (seconds, under load)
setDefaultTimeout(30_000)

const opened = closedAfterAll()

for (const b of backEnds) {
  describe.skipIf(b.skip)(`the upload signing key (settings) on ${b.name}`, () => {
    test('made on first use, then the same on every read; another name is another secret', async () => {
      const store = await b.open()
      opened.push(store)
      const first = await instanceSecret(store, 'upload_signing_key')
      expect(first).toMatch(/^[0-9a-f]{64}$/)
      expect(await instanceSecret(store, 'upload_signing_key')).toBe(first)
      expect(await lazySecret(store, 'upload_signing_key')()).toBe(first)
      expect(await instanceSecret(store, 'other_key')).not.toBe(first)
    })
  })
}

describe.skipIf(backEnds[1]!.skip)('the upload signing key across nodes on postgres', () => {
  test('nodes asking for it at the same moment on one database all get the same secret (a URL signed on one node is valid on every other)', async () => {
    const url = await freshPostgresUrl()
    const nodes = Array.from({ length: 4 }, () => new PostgresStore(url, { max: 2 }))
    opened.push(...nodes)
    const secrets = await Promise.all(nodes.flatMap(n => [instanceSecret(n, 'upload_signing_key'), lazySecret(n, 'upload_signing_key')()]))
    expect(new Set(secrets).size).toBe(1)
    expect(await nodes[0]!.get('SELECT count(*)::int AS n FROM settings')).toEqual({ n: 1 })
  })
})
