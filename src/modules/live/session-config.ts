/**
 * The transcription session a client configures with `session.update` (OpenAI's GA shape) or
 * `transcription_session.update` (the beta shape). Pure: a value in, a config or a field error out.
 * Written by hand rather than with TypeBox because every error must name OpenAI's own parameter path
 * (`session.audio.input.format.rate`) and say what to send instead, and unknown OpenAI fields that do
 * not change a transcription (noise_reduction, include, delay...) are accepted and ignored.
 */

const SUPPORTED_SAMPLE_RATES = [24000, 16000] as const
export type SampleRate = (typeof SUPPORTED_SAMPLE_RATES)[number]

interface ServerVad {
  type: 'server_vad'
  threshold: number
  prefixPaddingMs: number
  silenceDurationMs: number
}

export interface LiveSessionConfig {
  sampleRate: SampleRate
  model: string | null
  language: string | null
  prompt: string | null
  /** null: no voice-activity detection, the client commits each turn itself */
  turnDetection: ServerVad | null
}

/** OpenAI's defaults for a transcription session. */
export const DEFAULT_SESSION: LiveSessionConfig = {
  sampleRate: 24000,
  model: null,
  language: null,
  prompt: null,
  turnDetection: { type: 'server_vad', threshold: 0.5, prefixPaddingMs: 300, silenceDurationMs: 500 },
}

const MAX_PROMPT_CHARS = 4000
const MAX_MODEL_CHARS = 100
const MAX_PADDING_MS = 10_000

interface FieldError {
  param: string
  code: 'invalid_value' | 'invalid_type' | 'missing_required_parameter'
  message: string
}

export type ConfigResult = { ok: true; config: LiveSessionConfig } | { ok: false; error: FieldError }

class FieldFault extends Error {
  constructor(readonly field: FieldError) {
    super(field.message)
  }
}

function fail(param: string, code: FieldError['code'], message: string): never {
  throw new FieldFault({ param, code, message })
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectAt(value: unknown, param: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) fail(param, 'invalid_type', `\`${param}\` must be an object; send it as {...} or leave it out.`)
  return value
}

function optionalString(value: unknown, param: string, max: number): string | null | undefined {
  if (value === undefined || value === null) return value as undefined | null
  if (typeof value !== 'string') fail(param, 'invalid_type', `\`${param}\` must be a string; send text or leave it out.`)
  if (value.length > max) fail(param, 'invalid_value', `\`${param}\` is ${value.length} characters; send at most ${max}.`)
  return value
}

function numberIn(value: unknown, param: string, min: number, max: number, integer: boolean): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    fail(param, 'invalid_type', `\`${param}\` must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}.`)
  }
  if (value < min || value > max) fail(param, 'invalid_value', `\`${param}\` is ${value}; send a value from ${min} to ${max}.`)
  return value
}

function languageAt(value: unknown, param: string): string | null | undefined {
  const language = optionalString(value, param, 20)
  if (typeof language === 'string' && !/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(language)) {
    fail(param, 'invalid_value', `\`${param}\` "${language}" is not a language code; send an ISO-639-1 code such as "en", or leave it out to detect it.`)
  }
  return language
}

function turnDetectionAt(value: unknown, param: string, current: ServerVad | null): ServerVad | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  const fields = objectAt(value, param)!
  const type = fields.type ?? 'server_vad'
  if (type !== 'server_vad') {
    fail(`${param}.type`, 'invalid_value', `\`${param}.type\` "${String(type)}" is not supported; notesvc detects turns with "server_vad", or send null and commit each turn yourself.`)
  }
  const base = current ?? DEFAULT_SESSION.turnDetection!
  return {
    type: 'server_vad',
    threshold: numberIn(fields.threshold, `${param}.threshold`, 0, 1, false) ?? base.threshold,
    prefixPaddingMs: numberIn(fields.prefix_padding_ms, `${param}.prefix_padding_ms`, 0, MAX_PADDING_MS, true) ?? base.prefixPaddingMs,
    silenceDurationMs: numberIn(fields.silence_duration_ms, `${param}.silence_duration_ms`, 0, MAX_PADDING_MS, true) ?? base.silenceDurationMs,
  }
}

interface TranscriptionFields {
  model?: string | null
  language?: string | null
  prompt?: string | null
}

function transcriptionAt(value: unknown, param: string): TranscriptionFields {
  const fields = objectAt(value, param)
  if (!fields) return {}
  return {
    model: optionalString(fields.model, `${param}.model`, MAX_MODEL_CHARS),
    language: languageAt(fields.language, `${param}.language`),
    prompt: optionalString(fields.prompt, `${param}.prompt`, MAX_PROMPT_CHARS),
  }
}

function gaSampleRate(value: unknown, param: string): SampleRate | undefined {
  const format = objectAt(value, param)
  if (!format) return undefined
  if (format.type !== undefined && format.type !== 'audio/pcm') {
    fail(`${param}.type`, 'invalid_value', `\`${param}.type\` "${String(format.type)}" is not supported; send 16-bit little-endian mono PCM as "audio/pcm".`)
  }
  if (format.rate === undefined) return 24000
  if (!SUPPORTED_SAMPLE_RATES.includes(format.rate as SampleRate)) {
    fail(`${param}.rate`, 'invalid_value', `\`${param}.rate\` ${String(format.rate)} is not supported; send 24000 (OpenAI's rate) or 16000.`)
  }
  return format.rate as SampleRate
}

function merged(current: LiveSessionConfig, rate: SampleRate | undefined, t: TranscriptionFields, vad: ServerVad | null | undefined): LiveSessionConfig {
  return {
    sampleRate: rate ?? current.sampleRate,
    model: t.model === undefined ? current.model : t.model,
    language: t.language === undefined ? current.language : t.language,
    prompt: t.prompt === undefined ? current.prompt : t.prompt,
    turnDetection: vad === undefined ? current.turnDetection : vad,
  }
}

function readGaSession(session: Record<string, unknown>, current: LiveSessionConfig): LiveSessionConfig {
  if (session.type === undefined) {
    fail('session.type', 'missing_required_parameter', '`session.type` is missing; send "transcription".')
  }
  if (session.type !== 'transcription') {
    fail('session.type', 'invalid_value', `\`session.type\` "${String(session.type)}" is not supported; notesvc serves transcription sessions only: send "transcription" and connect with ?intent=transcription.`)
  }
  const audio = objectAt(session.audio, 'session.audio')
  const input = objectAt(audio?.input, 'session.audio.input')
  const rate = gaSampleRate(input?.format, 'session.audio.input.format')
  const transcription = transcriptionAt(input?.transcription, 'session.audio.input.transcription')
  const vad = turnDetectionAt(input?.turn_detection, 'session.audio.input.turn_detection', current.turnDetection)
  return merged(current, rate, transcription, vad)
}

function readBetaSession(session: Record<string, unknown>, current: LiveSessionConfig): LiveSessionConfig {
  const format = session.input_audio_format
  if (format !== undefined && format !== 'pcm16') {
    fail('session.input_audio_format', 'invalid_value', `\`session.input_audio_format\` "${String(format)}" is not supported; send "pcm16" (24 kHz, 16-bit, mono).`)
  }
  const transcription = transcriptionAt(session.input_audio_transcription, 'session.input_audio_transcription')
  const vad = turnDetectionAt(session.turn_detection, 'session.turn_detection', current.turnDetection)
  return merged(current, format === undefined ? undefined : 24000, transcription, vad)
}

/** Applies one update to the current session: fields left out keep their value. */
export function readSessionUpdate(session: unknown, shape: 'ga' | 'beta', current: LiveSessionConfig): ConfigResult {
  try {
    if (!isObject(session)) fail('session', 'invalid_type', '`session` must be an object, e.g. {"type":"transcription"}.')
    const config = shape === 'ga' ? readGaSession(session, current) : readBetaSession(session, current)
    return { ok: true, config }
  } catch (err) {
    if (err instanceof FieldFault) return { ok: false, error: err.field }
    throw err
  }
}
