import type { Env } from '../../environment'
import type { Logger } from '../../log'
import type { AsrEngine } from './engine'
import type { PocketsphinxOptions } from './pocketsphinx'

/**
 * A speech engine as it registers (src/engines/asr/registry.ts, one line each): its NOTESVC_ASR name,
 * its own variables, whether it can run here and why not, how to install it, the models it offers,
 * what doctor prints, and the engine itself. Everything else (NOTESVC_ASR=auto, doctor's lines,
 * GET /v1/models, start-up's log) is derived from these, in the registry's order.
 */
export interface SpeechEngineAdapter<Settings = unknown> {
  /** its NOTESVC_ASR value, and the engine's `name` (health's `engines.asr`) */
  readonly name: string
  /** the environment variables it reads besides NOTESVC_ASR, for flags and the docs */
  readonly variables?: readonly string[]
  /** whether NOTESVC_ASR=auto may pick it (the first available in the registry's order is) */
  readonly auto: boolean
  /** its settings from the environment (`chosen`: NOTESVC_ASR names it); throws ConfigError naming what to set */
  settings?(env: Env, chosen: boolean): Settings
  /** what it is, as configured: "whisper.cpp, model /…/ggml-base.en.bin" */
  label(ctx: SpeechContext, settings: Settings): string
  /** whether it can run here now and, if not, what is missing and what installs it; cheap (a stat, a PATH lookup) */
  availability(ctx: SpeechContext, settings: Settings): Available | Unavailable
  /** the engine (loading nothing heavy until first used) */
  create(ctx: SpeechContext, settings: Settings, log?: Logger): AsrEngine
  /** the model ids it offers for GET /v1/models (`inUse`: it is the engine in use) */
  models?(ctx: SpeechContext, settings: Settings, inUse: boolean): OfferedModel[]
  /** doctor's lines of its own (`chosen`: NOTESVC_ASR names it) */
  doctor?(ctx: SpeechContext, settings: Settings, chosen: boolean): Promise<DoctorCheck[]>
  /** what doctor's "speech engine" line adds when it is the engine in use */
  inUseAdvice?(ctx: SpeechContext, settings: Settings): { warn?: boolean; note?: string; fix?: string }
}

/** The settings the engines read: Config holds them all. */
export interface SpeechContext {
  modelsDir: string
  /** where `models pull` downloads from */
  modelsUrl: string
  whisperModel: string
  /** where PocketSphinx is looked for */
  pocketsphinx: PocketsphinxOptions
  /** chunks transcribed at once (NOTESVC_ASR_SLOTS) */
  asrSlots: number
  /** each engine's own settings, parsed by it from its variables, by its NOTESVC_ASR name */
  speechSettings: Readonly<Record<string, unknown>>
}

interface Available {
  ok: true
  /** what runs: "PocketSphinx (/usr/bin/pocketsphinx_continuous)" */
  detail: string
}

export interface Unavailable {
  ok: false
  /** for the operator: "no Whisper model at /…/ggml-base.en.bin" */
  missing: string
  /** the command that installs it, in backticks */
  install: string
  /** the same for a user of the API: what the server lacks, and what the operator does about it */
  lacks: string
  remedy: string
}

export interface OfferedModel {
  id: string
  /** Unix seconds (the model file's time); absent: when the server started */
  created?: number
}

/** One line of `notesvc doctor`. */
export interface DoctorCheck {
  name: string
  ok: boolean
  /** true when the server cannot run without it */
  essential?: boolean
  /** works, but not as the configuration seems to intend (printed as `warn`) */
  warn?: boolean
  detail: string
  fix?: string
}
