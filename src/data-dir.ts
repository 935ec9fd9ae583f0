/** Where the data folder and the models folder are, found the same way by every command. */
import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import type { Env } from './environment'

/** `set`: NOTESVC_DATA_DIR (or --data-dir); `legacy`: ./data holding a notesvc.db; `default`: the per-user folder */
export type DataDirSource = 'set' | 'legacy' | 'default'

/**
 * The data folder every command uses, found the same way by each: NOTESVC_DATA_DIR when set (relative
 * to `cwd`); else `./data` when it already holds a notesvc.db (installations from before the per-user
 * default); else `$XDG_DATA_HOME/notesvc`, i.e. `~/.local/share/notesvc` (a relative XDG_DATA_HOME is
 * ignored, as the XDG Base Directory specification says).
 */
export function resolveDataDir(env: Env, cwd: string): { path: string; source: DataDirSource } {
  if (env.NOTESVC_DATA_DIR) return { path: resolve(cwd, env.NOTESVC_DATA_DIR), source: 'set' }
  const legacy = resolve(cwd, 'data')
  if (existsSync(join(legacy, 'notesvc.db'))) return { path: legacy, source: 'legacy' }
  const xdg = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(env.HOME || homedir(), '.local', 'share')
  return { path: join(xdg, 'notesvc'), source: 'default' }
}

/**
 * The models folder: NOTESVC_MODELS_DIR when set; else `./models` of the folder the command runs in
 * when it holds a model (a `ggml-*.bin`, or `diarization/`: where models were pulled before the data
 * folder moved); else `models` inside the data folder, so `serve`, `doctor` and `models pull` run from
 * anywhere find the same models.
 */
export function resolveModelsDir(env: Env, cwd: string, dataDir: string): string {
  if (env.NOTESVC_MODELS_DIR) return resolve(cwd, env.NOTESVC_MODELS_DIR)
  const local = resolve(cwd, 'models')
  let holdsModels = false
  try {
    holdsModels = readdirSync(local).some(f => /^ggml-.+\.bin$/.test(f) || f === 'diarization')
  } catch {
    holdsModels = false
  }
  return holdsModels ? local : join(dataDir, 'models')
}

/** The line a command prints (on stderr) when it uses the data folder: where, and why that one. */
export function describeDataDir(config: { dataDir: string; dataDirSource: DataDirSource }): string {
  const why = {
    set: 'set by NOTESVC_DATA_DIR or --data-dir',
    legacy: './data of this folder holds a notesvc.db, so it is kept; NOTESVC_DATA_DIR overrides',
    default: 'default; NOTESVC_DATA_DIR overrides',
  }[config.dataDirSource]
  return `data folder: ${config.dataDir} (${why})`
}
