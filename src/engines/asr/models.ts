import { existsSync, readdirSync, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'

/** Where `models pull` downloads whisper.cpp's ggml models from (NOTESVC_MODELS_URL overrides it). */
export const DEFAULT_MODELS_URL = 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main'

export interface ModelFile {
  name: string
  path: string
  sizeBytes: number
}

/** whisper.cpp ggml models in the folder: `ggml-<name>.bin` files. */
export function listModels(dir: string): ModelFile[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter(f => /^ggml-.+\.bin$/.test(f))
    .sort()
    .map(f => ({ name: f.slice(5, -4), path: join(dir, f), sizeBytes: statSync(join(dir, f)).size }))
}

/** The file a model setting points at: a name in the models folder, or a path to a ggml file. */
export function modelPath(modelsDir: string, setting: string): string {
  if (setting.includes('/') || setting.endsWith('.bin')) return isAbsolute(setting) ? setting : resolve(setting)
  return join(modelsDir, `ggml-${setting}.bin`)
}
