/**
 * Reads that may take long, off the request thread. SQLite runs on the thread that calls it: a search
 * whose cost grows with what a note holds (bm25 over every place a word occurs, the text read to find
 * a snippet's window) held the event loop, and every other account's request waited behind it
 * (issue 22: 4 such searches at once made another account's GET /v1/health wait 115 ms). A
 * ReadWorker runs them in a thread of its own with its own read-only connection to the same file
 * (WAL: it reads the last committed state, as a read on the main connection outside a transaction
 * does), so the server's thread goes on answering. One thread: on a 2-core machine the request
 * thread keeps the other core; searches queue behind each other, not behind everything else.
 *
 * Bun's Worker, with the thread's file an entry point of the compiled binary (scripts/build.ts).
 */
import { DatabaseUnavailableError, ReadThreadUnavailableError, type ReadThread } from './store'

/**
 * The thread's entry point: next to this file when run from source; in the compiled binary, where
 * every module is bundled into one file at the root of its file system and each extra entry point
 * keeps its path under src/, at db/read-thread.ts from that root.
 */
// In the binary, beside the entry point in Bun's embedded file system (Bun.main: with --bytecode,
// import.meta holds the path the source had at build time, not the embedded one).
const THREAD_ENTRY = Bun.main.startsWith('/$bunfs/')
  ? new URL('./db/read-thread.ts', Bun.pathToFileURL(Bun.main)).href
  : new URL('./read-thread.ts', import.meta.url).href

type Pending = { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }

export class ReadWorker implements ReadThread {
  private worker: Worker | null = null
  private next = 1
  private pending = new Map<number, Pending>()
  private ready: Promise<void> | null = null
  private closed = false

  /** The thread starts with the first read (a CLI command that makes none starts none). */
  constructor(readonly path: string) {}

  private start(): Promise<void> {
    const worker = (this.worker = new Worker(THREAD_ENTRY))
    const { promise, resolve, reject } = Promise.withResolvers<void>()
    promise.catch(() => {}) // a thread that fails is told to each read (ReadThreadUnavailableError)
    worker.onmessage = (event: MessageEvent) => {
      const m = event.data as { opened?: boolean; id?: number; rows?: unknown[]; error?: { message: string; code?: string } }
      if (m.opened) return resolve()
      const p = this.pending.get(m.id!)
      if (!p) return
      this.pending.delete(m.id!)
      if (m.error) p.reject(/SQLITE_BUSY|SQLITE_LOCKED|SQLITE_IOERR|SQLITE_CANTOPEN/.test(m.error.code ?? '') ? new DatabaseUnavailableError(m.error.message, 1) : new Error(m.error.message))
      else p.resolve(m.rows!)
    }
    worker.onerror = event => {
      const err = new ReadThreadUnavailableError(`the read thread failed: ${(event as ErrorEvent).message}`)
      reject(err)
      for (const p of this.pending.values()) p.reject(err)
      this.pending.clear()
    }
    // the thread does not keep the process alive
    ;(worker as Worker & { unref(): void }).unref()
    worker.postMessage({ open: this.path })
    return promise
  }

  /** reads asked of the thread and not yet answered (waiting for it to start included) */
  private asked = 0

  get inFlight(): number {
    return this.asked
  }

  get started(): boolean {
    return this.worker !== null
  }

  /** The rows of one read statement, run on the thread's connection. */
  async all<T>(sql: string, params: readonly unknown[]): Promise<T[]> {
    if (this.closed) throw new ReadThreadUnavailableError('the read thread is closed')
    this.asked++
    try {
      await (this.ready ??= this.start())
      const id = this.next++
      return await new Promise<T[]>((resolve, reject) => {
        this.pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject })
        this.worker!.postMessage({ id, sql, params })
      })
    } finally {
      this.asked--
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.worker?.terminate()
    const err = new ReadThreadUnavailableError('the read thread was closed')
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }
}
