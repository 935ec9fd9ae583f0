import { silentLogger, type Logger } from '../../log'
import { createOllamaCaller } from './ollama'

/** Texts in, one vector each (in the same order) out. */
export type Embedder = (texts: string[]) => Promise<number[][]>

/**
 * Embeddings from Ollama's `/api/embed` (the `ollama` client's `embed`), through the same caller as
 * its answers: a timeout per try (20 s: a short batch of passages, a model that may still be loading),
 * one retry of a transient failure, an LlmUnavailableError saying what to do in the end.
 */
export function createOllamaEmbedder(opts: { host: string; model: string; timeoutMs?: number; log?: Logger }): Embedder {
  const call = createOllamaCaller({ host: opts.host.replace(/\/+$/, ''), model: opts.model, timeoutMs: opts.timeoutMs ?? 20_000, retries: 1, backoffMs: 500, fetch, log: opts.log ?? silentLogger })
  return async texts => (await call('embed', client => client.embed({ model: opts.model, input: texts }))).embeddings
}

/** The cosine of two vectors (0 when either is all zeros). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0
}
