import type { Config } from '../../config'
import type { Logger } from '../../log'
import type { AsrEngine } from './engine'
import { modelPath } from './models'
import { createPocketsphinxEngine } from './pocketsphinx'

/**
 * The engine NOTESVC_ASR names. whisper.cpp's native addon is loaded on first use, not at start-up,
 * so a server that never transcribes (or uses PocketSphinx) never loads it.
 */
export function createAsrEngine(config: Config, log?: Logger): AsrEngine {
  if (config.asr === 'pocketsphinx') return createPocketsphinxEngine()
  let engine: Promise<AsrEngine> | undefined
  const load = () => (engine ??= import('./whisper').then(m => m.createWhisperEngine({ modelPath: modelPath(config.modelsDir, config.whisperModel), log })))
  return {
    name: 'whisper',
    ready: async () => (await load()).ready(),
    transcribeChunk: async (samples, opts) => (await load()).transcribeChunk(samples, opts),
  }
}
