import { afterAll, afterEach } from 'bun:test'
import type { Store } from '../../src/db/store'
import type { BackEnd } from './backends'

/**
 * The `open()` of a back end, for the tests of the describe block it is called in: every store it
 * opens is closed after the test, so a run of many tests does not keep a PostgreSQL connection pool
 * per test open until the end.
 */
export function closingAfterEach(b: BackEnd): () => Promise<Store> {
  const opened: Store[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map(s => s.close()))
  })
  return async () => {
    const store = await b.open()
    opened.push(store)
    return store
  }
}

/**
 * A list for the stores the calling file opens: push each one on it, and all of them are closed, in
 * turn, after the file's tests.
 */
export function closedAfterAll(): Store[] {
  const opened: Store[] = []
  afterAll(async () => {
    for (const s of opened.splice(0)) await s.close()
  })
  return opened
}
