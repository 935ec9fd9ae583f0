/**
 * The aligner's thread (thread.ts): one aligner (its PocketSphinx decoder loaded once, on the first
 * message), each message a segment's samples and text, answered with the alignment or the error's message.
 */
import { createAligner } from './index'

declare const self: Worker

let aligner: ReturnType<typeof createAligner> | null = null

self.onmessage = (e: MessageEvent) => {
  const m = e.data as { id: number; samples: Float32Array; text: string; offset: number }
  try {
    aligner ??= createAligner()
    self.postMessage({ id: m.id, alignment: aligner.align(m.samples, m.text, { offset: m.offset }) })
  } catch (err) {
    self.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) })
  }
}
