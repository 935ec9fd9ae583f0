/**
 * The thread of a ReadWorker (read-worker.ts): a read-only connection to the SQLite file, answering
 * each message `{ id, sql, params }` with `{ id, rows }` or `{ id, error }`. Statements are prepared
 * once per text.
 */
import { Database, type Statement } from 'bun:sqlite'

declare const self: Worker
let db: Database | null = null
const statements = new Map<string, Statement>()

self.onmessage = (event: MessageEvent) => {
  const m = event.data as { open?: string; id?: number; sql?: string; params?: unknown[] }
  if (m.open !== undefined) {
    db = new Database(m.open, { readonly: true, strict: true })
    db.exec('PRAGMA busy_timeout = 5000')
    db.exec('PRAGMA mmap_size = 268435456')
    postMessage({ opened: true })
    return
  }
  try {
    let s = statements.get(m.sql!)
    if (!s) statements.set(m.sql!, (s = db!.prepare(m.sql!)))
    postMessage({ id: m.id, rows: s.all(...(m.params as never[])) })
  } catch (err) {
    const e = err as { message?: string; code?: string }
    postMessage({ id: m.id, error: { message: String(e.message ?? err), code: e.code } })
  }
}
