import { ConfigError, oneOf, type Env } from '../../environment'
import type { SpeechEngineAdapter } from './adapter'
import { pocketsphinxAdapter } from './pocketsphinx-adapter'
import { remoteAdapter } from './remote'
import { whisperAdapter } from './whisper-adapter'

/**
 * The speech engines, one line each, under their NOTESVC_ASR names, in the order NOTESVC_ASR=auto
 * tries them. A new engine is its adapter file (a `SpeechEngineAdapter`) and its line here.
 */
export const SPEECH_ENGINES: readonly SpeechEngineAdapter[] = [
  whisperAdapter,
  pocketsphinxAdapter,
  remoteAdapter,
]

/** The variables the engines read besides NOTESVC_ASR (config.ts takes them as flags too). */
export const SPEECH_VARIABLES = SPEECH_ENGINES.flatMap(e => e.variables ?? [])

export function speechEngineNamed(name: string): SpeechEngineAdapter {
  const engine = SPEECH_ENGINES.find(e => e.name === name)
  if (!engine) throw new ConfigError(`NOTESVC_ASR=${name} is not valid; use one of: auto, ${SPEECH_ENGINES.map(e => e.name).join(', ')}`)
  return engine
}

/** NOTESVC_ASR (`auto` or an engine's name) and each engine's settings from its own variables, as Config holds them. */
export function speechSetting(env: Env): { asr: string; speechSettings: Record<string, unknown> } {
  const asr = oneOf('NOTESVC_ASR', env.NOTESVC_ASR, ['auto', ...SPEECH_ENGINES.map(e => e.name)], 'auto')
  const speechSettings: Record<string, unknown> = {}
  for (const e of SPEECH_ENGINES) if (e.settings) speechSettings[e.name] = e.settings(env, asr === e.name)
  return { asr, speechSettings }
}
