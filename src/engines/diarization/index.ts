/**
 * NOTESVC_DIARIZATION's engine, chosen like the speech engine: `auto` (the default) uses sherpa-onnx
 * when its two model files are in the models folder (`notesvc models pull diarization`, or `models
 * import`), else the builtin engine, which needs no weights; `builtin` and `sherpa-onnx` force one;
 * `off` diarizes nothing. `auto` looks again on every call (two stats), so models imported while the
 * server runs are used at once. The builtin engine runs in a thread per session (thread.ts); sherpa-onnx
 * does its work in the addon's own threads. Under `auto`, model files sherpa-onnx cannot run (tried in
 * a child process first: model-trial.ts) leave the builtin engine in its place, from the job that
 * found it out on, until the files change.
 */
import type { Config } from '../../config'
import type { Logger } from '../../log'
import { DiarizationUnavailableError, type DiarizationEngine } from './engine'
import { diarizationModelPaths } from './models'
import { knownRefusal } from './model-trial'
import { createSherpaDiarizationEngine, sherpaModelsPresent } from './sherpa'
import { threadedEngine } from './thread'

type DiarizationChoice = 'builtin' | 'sherpa-onnx' | 'off'

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

  let warned = ''
  /** `auto`: sherpa-onnx, or the builtin engine when sherpa-onnx cannot run (its models refused, its addon missing); said once per reason. */
  function sherpaElseBuiltin(): DiarizationEngine {
    let chosen: DiarizationEngine = engines['sherpa-onnx']()
    return {
      get name() {
        return chosen.name
      },
      async ready() {
        try {
          await engines['sherpa-onnx']().ready()
        } catch (err) {
          if (!(err instanceof DiarizationUnavailableError)) throw err
          if (warned !== err.message) log?.warn('sherpa-onnx cannot run here; the builtin diarization engine is used instead', { error: err.message })
          warned = err.message
          chosen = engines.builtin()
          await chosen.ready()
        }
      },
      start: () => chosen.start(),
    }
  }

  function describe(): { engine: DiarizationChoice; detail: string } {
    if (config.diarization === 'off') return { engine: 'off', detail: 'off (NOTESVC_DIARIZATION=off): transcripts have no speakers' }
    if (config.diarization === 'builtin') return { engine: 'builtin', detail: 'builtin: spectral voice prints and clustering, no model files (NOTESVC_DIARIZATION=builtin)' }
    const models = sherpaModelsPresent(config.modelsDir)
    const refusal = models.ready ? knownRefusal(diarizationModelPaths(config.modelsDir)) : null
    if (config.diarization === 'sherpa-onnx') return { engine: 'sherpa-onnx', detail: `sherpa-onnx (NOTESVC_DIARIZATION=sherpa-onnx): ${refusal ?? models.message}` }
    if (refusal) return { engine: 'builtin', detail: `builtin: spectral voice prints and clustering, in place of sherpa-onnx, which cannot run its model files: ${refusal}` }
    if (models.ready) return { engine: 'sherpa-onnx', detail: `sherpa-onnx: ${models.message}` }
    return { engine: 'builtin', detail: `builtin: spectral voice prints and clustering, no model files; for the neural engine ${models.message}` }
  }

  return {
    describe,
    current() {
      const { engine } = describe()
      if (engine === 'off') return null
      return engine === 'sherpa-onnx' && config.diarization === 'auto' ? sherpaElseBuiltin() : engines[engine]()
    },
  }
}
