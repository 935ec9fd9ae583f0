import { join } from 'node:path'
import { loadConfig, type Config } from '../config'
import type { KitOptions } from './types'

/** Where the machine's engines are found, taken from the test process for `engines: 'installed'`. */
const ENGINE_LOCATION_VARIABLES = ['NOTESVC_MODELS_DIR', 'NOTESVC_WHISPER_MODEL', 'OLLAMA_HOST', 'NOTESVC_OLLAMA_MODEL', 'NOTESVC_FFMPEG', 'NOTESVC_FFPROBE']

/**
 * The environment a kit's server is configured from (loadConfig): built from the options alone, not
 * from the test process's environment (a developer's NOTESVC_DATABASE_URL or PORT must not reach a
 * throwaway server), except where the installed engines are when asked for them.
 */
function kitEnvironment(options: KitOptions, dataDir: string, port: number): Record<string, string> {
  const engines = options.engines ?? 'sandbox'
  if (engines !== 'sandbox' && engines !== 'installed') throw new TypeError(`startNotesvc: engines must be 'sandbox' or 'installed', not ${JSON.stringify(engines)}`)
  const workers = options.workers ?? 1
  if (!Number.isInteger(workers) || workers < 0 || workers > 64) throw new TypeError(`startNotesvc: workers must be a whole number from 0 to 64, not ${workers}`)
  const url = `http://127.0.0.1:${port}`
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: String(port),
    NOTESVC_PUBLIC_URL: url,
    NOTESVC_DATA_DIR: dataDir,
    NOTESVC_METERING: options.metering === false ? 'off' : 'on',
    NOTESVC_WORKERS: String(workers),
    NOTESVC_ASR_SLOTS: '1',
    // the kit's receiver, and the developer's own, listen on loopback
    NOTESVC_ALLOW_PRIVATE_URLS: '1',
  }
  if (engines === 'sandbox') {
    // nothing looked for on this machine: the same answers everywhere
    Object.assign(env, { NOTESVC_LLM: 'builtin', NOTESVC_DIARIZATION: 'off', NOTESVC_MODELS_DIR: join(dataDir, 'models') })
  } else {
    for (const name of ENGINE_LOCATION_VARIABLES) {
      const value = process.env[name]
      if (value) env[name] = value
    }
  }
  return { ...env, ...options.env }
}

/**
 * The kit's configuration. With the sandbox engines no speech engine is found whatever the machine
 * has: no Whisper model in the private models folder, and PocketSphinx looked for where it is not
 * (the program's path is a setting no variable reaches, as createTestApp's tests set it).
 */
export function kitConfig(options: KitOptions, dataDir: string, port: number): Config {
  const config = loadConfig(kitEnvironment(options, dataDir, port))
  if ((options.engines ?? 'sandbox') === 'sandbox' && !options.env?.NOTESVC_ASR) {
    config.pocketsphinx = { ...config.pocketsphinx, program: join(dataDir, 'no-speech-engine-in-the-sandbox') }
  }
  return config
}
