/**
 * Diarization beside transcription: a session fed each chunk of samples as transcribeMedia decodes it
 * (`onSamples`), asked for the turns when transcription is done. A diarization that fails (the engine
 * not ready, an error in a feed or at the end) is logged and gives null: the transcript is kept,
 * without speakers; only the caller's signal ending stops it with an error.
 */
import type { Diarization, DiarizationEngine, SpeakerHint } from './engine'

export interface Alongside {
  /** for transcribeMedia's `onSamples`; undefined when there is nothing to feed */
  onSamples?: (samples: Float32Array) => void
  finish(hint: SpeakerHint | undefined, signal: AbortSignal): Promise<Diarization | null>
}

type Warn = (msg: string, fields: Record<string, unknown>) => void

const message = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** The engine when it can run; null when off or not ready (logged). */
export async function readyEngine(engine: DiarizationEngine | null | undefined, warn: Warn): Promise<DiarizationEngine | null> {
  if (!engine) return null
  try {
    await engine.ready()
    return engine
  } catch (err) {
    warn('diarization engine not ready; the transcript will have no speakers', { engine: engine.name, error: message(err) })
    return null
  }
}

export function diarizeAlongside(engine: DiarizationEngine | null, warn: Warn): Alongside {
  if (!engine) return { finish: async () => null }
  let session: ReturnType<DiarizationEngine['start']> | null
  try {
    session = engine.start()
  } catch (err) {
    warn('diarization failed to start', { engine: engine.name, error: message(err) })
    session = null
  }
  let failed = session === null
  return {
    onSamples: samples => {
      if (failed) return
      try {
        session!.feed(samples)
      } catch (err) {
        failed = true
        warn('diarization failed', { engine: engine.name, error: message(err) })
      }
    },
    async finish(hint, signal) {
      if (failed) return null
      try {
        return await session!.finish({ speakers: hint, signal })
      } catch (err) {
        if (signal.aborted) throw err
        warn('diarization failed', { engine: engine.name, error: message(err) })
        return null
      }
    },
  }
}
