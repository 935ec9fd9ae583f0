import { existsSync } from 'node:fs'
import type { Config } from '../../config'
import type { Logger } from '../../log'
import { AsrUnavailableError, type AsrEngine, type ChunkTranscription } from './engine'
import { modelPath } from './models'
import { createPocketsphinxEngine, findPocketsphinx, POCKETSPHINX_INSTALL_HINT } from './pocketsphinx'
import { createWhisperEngine, pullCommand } from './whisper'

export type AsrChoice = 'whisper' | 'pocketsphinx' | 'none'

export interface AsrSelector {
  /**
   * The engine to use now: the one NOTESVC_ASR forces, or for `auto` whisper.cpp when its model file
   * is present, else PocketSphinx when installed, else a stand-in that refuses (`missingSpeechEngine`).
   * `auto` looks again on every call (a stat and a PATH lookup), so a model pulled or a package
   * installed while the server runs is used at once.
   */
  current(): AsrEngine
  /** which engine `current()` gives, and why: for doctor and the start-up log */
  describe(): { engine: AsrChoice; detail: string }
}

/** The stand-in `auto` gives when neither engine is installed: every use fails with what to install. */
class NoSpeechEngine implements AsrEngine {
  readonly name = 'none'
  constructor(readonly message: string) {}
  async ready(): Promise<void> {
    throw new AsrUnavailableError(this.message)
  }
  async transcribeChunk(): Promise<ChunkTranscription> {
    throw new AsrUnavailableError(this.message)
  }
}

/**
 * When no speech engine is installed, what to install (a sentence for the user); null otherwise.
 * Loads nothing, so a route can ask before it charges or queues anything.
 */
export function missingSpeechEngine(engine: AsrEngine): string | null {
  return engine instanceof NoSpeechEngine ? engine.message : null
}

/**
 * NOTESVC_ASR's engine. whisper.cpp's native addon and model are loaded on first use, not at
 * start-up, so a server that never transcribes (or uses PocketSphinx) never loads them.
 */
export function createAsrSelector(config: Config, log?: Logger): AsrSelector {
  const model = modelPath(config.modelsDir, config.whisperModel)
  let whisper: AsrEngine | undefined
  let pocketsphinx: AsrEngine | undefined
  const engines = {
    whisper: () => (whisper ??= createWhisperEngine({ modelPath: model, log, contexts: config.asrSlots })),
    pocketsphinx: () => (pocketsphinx ??= createPocketsphinxEngine(config.pocketsphinx)),
  }
  const noEngine = new NoSpeechEngine(
    `This server has no speech engine: no Whisper model (${config.whisperModel}) in its models folder, and PocketSphinx is not installed. ` +
      `Download the model with \`${pullCommand(model)}\`, or install PocketSphinx with \`${POCKETSPHINX_INSTALL_HINT}\`, then try again.`,
  )

  function describe(): { engine: AsrChoice; detail: string } {
    if (config.asr === 'whisper') return { engine: 'whisper', detail: `whisper.cpp, model ${model} (NOTESVC_ASR=whisper)` }
    if (config.asr === 'pocketsphinx') return { engine: 'pocketsphinx', detail: 'PocketSphinx (NOTESVC_ASR=pocketsphinx)' }
    if (existsSync(model)) return { engine: 'whisper', detail: `whisper.cpp, model ${model}` }
    const found = findPocketsphinx(config.pocketsphinx)
    if ('program' in found) return { engine: 'pocketsphinx', detail: `PocketSphinx (${found.program}); no Whisper model at ${model}` }
    return {
      engine: 'none',
      detail: `none: no Whisper model at ${model}, and PocketSphinx is not installed (${found.missing}); ` +
        `run \`${pullCommand(model)}\` or \`${POCKETSPHINX_INSTALL_HINT}\``,
    }
  }

  return {
    describe,
    current() {
      const { engine } = describe()
      return engine === 'none' ? noEngine : engines[engine]()
    },
  }
}
