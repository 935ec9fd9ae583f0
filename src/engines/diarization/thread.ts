/**
 * The builtin engine off the request thread. Its work is JavaScript (spectra, voice prints,
 * clustering: about 0.05 s per second of audio), run where it is fed: in the pipeline, on the thread
 * that also answers HTTP, a 45-s chunk would hold the event loop for about two seconds. Here each
 * session lives in a Bun Worker of its own (diarize-thread.ts), fed by messages (the samples are
 * transferred, not copied), and answers when asked to finish. In the compiled binary the thread's
 * file is an entry point of its own (scripts/build.ts), as db/read-thread.ts is.
 */
import { DiarizationUnavailableError, type Diarization, type DiarizationEngine, type DiarizationSession, type DiarizeOptions } from './engine'

// In the binary, beside the entry point in Bun's embedded file system (see db/read-worker.ts).
const THREAD_ENTRY = Bun.main.startsWith('/$bunfs/')
  ? new URL('./engines/diarization/diarize-thread.ts', Bun.pathToFileURL(Bun.main)).href
  : new URL('./diarize-thread.ts', import.meta.url).href

/** What the thread answers: the diarization, or why it failed. */
type ThreadAnswer = { diarization: Omit<Diarization, 'embeddings'> & { embeddings?: number[][] } } | { error: string }

/**
 * The engine named `name`, run in a thread per session: the thread builds it, so this thread never
 * loads its code (the builtin engine's ml-matrix and FFT are not on the start-up path).
 */
export function threadedEngine(name: 'builtin'): DiarizationEngine {
  return {
    name,
    ready: async () => {},
    start(): DiarizationSession {
      let worker: Worker | null = new Worker(THREAD_ENTRY)
      worker.postMessage({ type: 'start', engine: name })
      const { promise, resolve } = Promise.withResolvers<ThreadAnswer>()
      worker.onmessage = (e: MessageEvent<ThreadAnswer>) => resolve(e.data)
      worker.onerror = e => resolve({ error: e.message || 'the diarization thread failed' })
      const end = () => {
        worker?.terminate()
        worker = null
      }
      return {
        feed(samples: Float32Array) {
          if (!worker) throw new DiarizationUnavailableError('the diarization session has ended')
          const copy = samples.slice() // the caller keeps its own; the copy's buffer moves to the thread
          worker.postMessage({ type: 'feed', samples: copy }, [copy.buffer])
        },
        async finish(opts: DiarizeOptions = {}): Promise<Diarization> {
          if (!worker) throw new DiarizationUnavailableError('the diarization session has ended')
          const onAbort = () => end()
          opts.signal?.addEventListener('abort', onAbort, { once: true })
          try {
            worker.postMessage({ type: 'finish', speakers: opts.speakers })
            const answer = await Promise.race([promise, new Promise<never>((_, reject) => {
              if (opts.signal?.aborted) reject(opts.signal.reason)
              opts.signal?.addEventListener('abort', () => reject(opts.signal!.reason), { once: true })
            })])
            if ('error' in answer) throw new Error(answer.error)
            const { embeddings, ...d } = answer.diarization
            return embeddings ? { ...d, embeddings: embeddings.map(e => Float32Array.from(e)) } : d
          } finally {
            opts.signal?.removeEventListener('abort', onAbort)
            end()
          }
        },
      }
    },
  }
}
