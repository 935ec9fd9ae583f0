import type { Logger } from '../../log'
import type { DoctorCheck, OfferedModel, SpeechContext, SpeechEngineAdapter, Unavailable } from './adapter'
import type { AsrEngine } from './engine'
import { NoSpeechEngine, noneDetail } from './none'
import { SPEECH_ENGINES, speechEngineNamed } from './registry'

/** What choosing an engine reads: NOTESVC_ASR and what the engines read (Config has it all). */
export interface SpeechConfig extends SpeechContext {
  /** `auto`, or the name an engine registered under */
  asr: string
}

export interface AsrSelector {
  /**
   * The engine to use now: the one NOTESVC_ASR forces, or for `auto` the first of the registry that
   * `auto` may pick and that can run here (whisper.cpp when its model file is present, else
   * PocketSphinx when installed), else a stand-in that refuses (`missingSpeechEngine`). `auto` looks
   * again on every call (a stat and a PATH lookup), so a model pulled or a package installed while
   * the server runs is used at once.
   */
  current(): AsrEngine
  /** which engine `current()` gives (its NOTESVC_ASR name, or `none`), and why: for doctor and the start-up log */
  describe(): { engine: string; detail: string }
}

/**
 * When no speech engine is installed, what to install (a sentence for the user); null otherwise.
 * Loads nothing, so a route can ask before it charges or queues anything.
 */
export function missingSpeechEngine(engine: AsrEngine): string | null {
  return engine instanceof NoSpeechEngine ? engine.message : null
}

const settingsOf = (config: SpeechContext, engine: SpeechEngineAdapter) => config.speechSettings[engine.name]

/** The engine NOTESVC_ASR names or `auto` finds (null: none), its description, and why `auto` passed over the others. */
function choose(config: SpeechConfig): { engine: SpeechEngineAdapter | null; detail: string; passed: Unavailable[] } {
  if (config.asr !== 'auto') {
    const engine = speechEngineNamed(config.asr)
    return { engine, detail: `${engine.label(config, settingsOf(config, engine))} (NOTESVC_ASR=${engine.name})`, passed: [] }
  }
  const passed: Unavailable[] = []
  for (const engine of SPEECH_ENGINES) {
    if (!engine.auto) continue
    const found = engine.availability(config, settingsOf(config, engine))
    if (found.ok) return { engine, detail: [found.detail, ...passed.map(p => p.missing)].join('; '), passed }
    passed.push(found)
  }
  return { engine: null, detail: noneDetail(passed), passed }
}

/**
 * NOTESVC_ASR's engine. Each engine is made once, on first use, and loads what it needs (whisper.cpp's
 * native addon and model) only when it first transcribes, so a server that never transcribes never
 * loads them.
 */
export function createAsrSelector(config: SpeechConfig, log?: Logger): AsrSelector {
  const made = new Map<string, AsrEngine>()
  return {
    describe() {
      const { engine, detail } = choose(config)
      return { engine: engine?.name ?? 'none', detail }
    },
    current() {
      const { engine, passed } = choose(config)
      if (!engine) return new NoSpeechEngine(passed)
      let instance = made.get(engine.name)
      if (!instance) made.set(engine.name, (instance = engine.create(config, settingsOf(config, engine), log)))
      return instance
    },
  }
}

/**
 * doctor's speech lines: each engine's own (whisper's model, PocketSphinx's program, a remote
 * engine's server), then the engine NOTESVC_ASR gives, with what that engine adds about itself.
 */
export async function speechChecks(config: SpeechConfig): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = []
  for (const engine of SPEECH_ENGINES) {
    if (engine.doctor) checks.push(...(await engine.doctor(config, settingsOf(config, engine), config.asr === engine.name)))
  }
  const { engine, detail } = choose(config)
  const advice = engine?.inUseAdvice?.(config, settingsOf(config, engine))
  checks.push({ name: 'speech engine', ok: engine !== null, warn: advice?.warn, detail: advice?.note ? `${detail}; ${advice.note}` : detail, fix: advice?.fix })
  return checks
}

/** The model ids the engines offer (GET /v1/models): the engine in use first, then the others in the registry's order. */
export function speechModels(config: SpeechContext, inUse: string): OfferedModel[] {
  const ordered = [...SPEECH_ENGINES.filter(e => e.name === inUse), ...SPEECH_ENGINES.filter(e => e.name !== inUse)]
  return ordered.flatMap(e => e.models?.(config, settingsOf(config, e), e.name === inUse) ?? [])
}
