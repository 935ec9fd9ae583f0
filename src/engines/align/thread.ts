/**
 * Forced alignment off the request thread. Aligning takes about 0.02× real time in CPU (a 3-s segment
 * about 70 ms on a loaded machine, a 30-s one about half a second), all of it synchronous native
 * code, which would hold the event loop that answers HTTP; here one Bun Worker (align-thread.ts) keeps
 * one aligner and its decoder, and segments are sent to it one after another (the samples
 * transferred, not copied). In the compiled binary the thread's file is an entry point of its own
 * (scripts/build.ts), as db/read-thread.ts is.
 */
import { AlignmentInputError, type Alignment } from './index'

const THREAD_ENTRY = Bun.main.startsWith('/$bunfs/')
  ? new URL('./engines/align/align-thread.ts', Bun.pathToFileURL(Bun.main)).href
  : new URL('./align-thread.ts', import.meta.url).href

type ThreadAnswer = { id: number; alignment: Alignment } | { id: number; error: string }

export interface ThreadedAligner {
  align(samples: Float32Array, text: string, opts: { offset: number }): Promise<Alignment>
  close(): void
}

export function threadedAligner(): ThreadedAligner {
  let worker: Worker | null = null
  let next = 0
  const waiting = new Map<number, { resolve: (a: Alignment) => void; reject: (e: Error) => void }>()

  function thread(): Worker {
    if (worker) return worker
    const w = new Worker(THREAD_ENTRY)
    ;(w as Worker & { unref(): void }).unref() // an idle aligner does not keep the process alive
    w.onmessage = (e: MessageEvent<ThreadAnswer>) => {
      const p = waiting.get(e.data.id)
      waiting.delete(e.data.id)
      if (!p) return
      if ('error' in e.data) p.reject(e.data.error.includes('NUL') ? new AlignmentInputError(e.data.error) : new Error(e.data.error))
      else p.resolve(e.data.alignment)
    }
    w.onerror = e => {
      // the thread died: every waiting alignment fails (the caller times its words in proportion), the next opens a new thread
      for (const p of waiting.values()) p.reject(new Error(e.message || 'the alignment thread failed'))
      waiting.clear()
      worker = null
    }
    return (worker = w)
  }

  return {
    align(samples, text, opts) {
      const id = next++
      const copy = samples.slice()
      const answer = new Promise<Alignment>((resolve, reject) => waiting.set(id, { resolve, reject }))
      thread().postMessage({ id, samples: copy, text, offset: opts.offset }, [copy.buffer])
      return answer
    },
    close() {
      worker?.terminate()
      worker = null
    },
  }
}
