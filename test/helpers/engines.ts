import type { AsrEngine, ChunkTranscription } from '../../src/engines/asr/engine'
import { SAMPLE_RATE } from '../../src/engines/asr/engine'

/**
 * A speech engine for testing the pipeline around it (queueing, chunking, stages, failures): it
 * reports what it was given, one segment per chunk, so tests can check the audio arrived whole and at
 * 16 kHz. The real engines are tested on their own (test/engines) and end to end.
 */
export function recordingEngine(o: { delayMs?: number; fail?: () => Error | null } = {}) {
  const calls: { samples: number; rms: number }[] = []
  const engine: AsrEngine = {
    name: 'recording',
    async ready() {},
    async transcribeChunk(samples): Promise<ChunkTranscription> {
      const err = o.fail?.()
      if (err) throw err
      if (o.delayMs) await Bun.sleep(o.delayMs)
      let sum = 0
      for (const s of samples) sum += s * s
      calls.push({ samples: samples.length, rms: Math.sqrt(sum / Math.max(1, samples.length)) })
      const seconds = samples.length / SAMPLE_RATE
      return { segments: [{ start: 0, end: seconds, text: `Heard ${seconds.toFixed(2)} seconds.` }], language: 'en' }
    },
  }
  return { engine, calls }
}
