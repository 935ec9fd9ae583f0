/**
 * NOTESVC_DIARIZATION's engine, chosen like the speech engine: `auto` (the default) uses sherpa-onnx
 * when its two model files are in the models folder (`notesvc models pull diarization`, or `models
 * import`), else the builtin engine, which needs no weights; `builtin` and `sherpa-onnx` force one;
 * `off` diarizes nothing. `auto` looks again on every call (two stats), so models imported while the
 * server runs are used at once. The builtin engine runs in a thread per session (thread.ts); sherpa-onnx
 * does its work in the addon's own threads.
 */
import type { Config } from '../../config'
import type { Logger } from '../../log'
import type { DiarizationEngine } from './engine'
import { createSherpaDiarizationEngine, sherpaModelsPresent } from './sherpa'
import { threadedEngine } from './thread'

export type DiarizationChoice = 'builtin' | 'sherpa-onnx' | 'off'

export interface DiarizationSelector {
  /** the engine to use now, or null when off */
  current(): DiarizationEngine | null
  /** which engine `current()` gives, and why: for health, doctor and the start-up log */
  describe(): { engine: DiarizationChoice; detail: string }
}

export function createDiarizationSelector(config: Pick<Config, 'diarization' | 'modelsDir'>, log?: Logger): DiarizationSelector {
  let builtin: DiarizationEngine | undefined
  let sherpa: DiarizationEngine | undefined
  const engines = {
    builtin: () => (builtin ??= threadedEngine('builtin')),
    'sherpa-onnx': () => (sherpa ??= createSherpaDiarizationEngine({ modelsDir: config.modelsDir, log })),
  }

  function describe(): { engine: DiarizationChoice; detail: string } {
    if (config.diarization === 'off') return { engine: 'off', detail: 'off (NOTESVC_DIARIZATION=off): transcripts have no speakers' }
    if (config.diarization === 'builtin') return { engine: 'builtin', detail: 'builtin: spectral voice prints and clustering, no model files (NOTESVC_DIARIZATION=builtin)' }
    const models = sherpaModelsPresent(config.modelsDir)
    if (config.diarization === 'sherpa-onnx') return { engine: 'sherpa-onnx', detail: `sherpa-onnx (NOTESVC_DIARIZATION=sherpa-onnx): ${models.message}` }
    if (models.ready) return { engine: 'sherpa-onnx', detail: `sherpa-onnx: ${models.message}` }
    return { engine: 'builtin', detail: `builtin: spectral voice prints and clustering, no model files; for the neural engine ${models.message}` }
  }

  return {
    describe,
    current() {
      const { engine } = describe()
      return engine === 'off' ? null : engines[engine]()
    },
  }
}
