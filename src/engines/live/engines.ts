/**
 * Which engine a live stream gets, in one place (docs/realtime.md, "Engines for live streams"):
 * NOTESVC_LIVE_ENGINE=auto follows the speech engine in use (NOTESVC_ASR, as the batch jobs get it),
 * looked at again for each stream:
 * - whisper, when its model file is there → whisper.cpp on a sliding window (windowed.ts): partials
 *   revised about every second, committed words, the final from the whole turn decoded again;
 * - remote → per turn (windowed.ts without a window): the turn sent as one WAV when it ends, its
 *   answer the final, no partials (an OpenAI-compatible transcription server does not stream);
 * - PocketSphinx, or anything else (whisper without its model, no engine) → PocketSphinx's live decoder
 *   (index.ts), which decodes as the audio comes.
 * NOTESVC_LIVE_ENGINE=pocketsphinx always takes PocketSphinx's live decoder (whisper.cpp too slow for
 * live streams on this machine, or a remote server too far).
 */
import type { SpeechContext } from '../asr/adapter'
import type { AsrEngine } from '../asr/engine'
import type { AsrScheduler } from '../asr/scheduler'
import { SPEECH_ENGINES } from '../asr/registry'
import { LIVE_SAMPLE_RATE, openLiveRecognizer, type LiveRecognizer } from './index'
import type { TurnDetection } from './turns'
import { openWindowedRecognizer, type SlidingWindow, type WindowDecoder } from './windowed'

/** NOTESVC_LIVE_ENGINE's values. */
export const LIVE_ENGINE_SETTINGS = ['auto', 'pocketsphinx'] as const
export type LiveEngineSetting = (typeof LIVE_ENGINE_SETTINGS)[number]

/** whisper.cpp's window: the turn's last 15 s at most, decoded again every second of new audio. */
const WHISPER_WINDOW: SlidingWindow = { maxSeconds: 15, stepSeconds: 1 }

export interface LiveEngines {
  setting: LiveEngineSetting
  /** the speech engine in use (NOTESVC_ASR) */
  asr: () => AsrEngine
  /** what tells whether an engine can run here (Config): whisper's model file, the remote engine's URL */
  speech: SpeechContext
  /** the process's ASR slots, shared with the batch jobs: PocketSphinx's live decoder decodes under them */
  slots?: AsrScheduler
}

type LiveEngineKind = 'pocketsphinx' | 'whisper' | 'remote'

export interface LiveEngineChoice {
  kind: LiveEngineKind
  /** the speech engine a windowed stream decodes with (null for PocketSphinx's live decoder) */
  asr: AsrEngine | null
  /** for the start-up log: what live streams get, and why */
  detail: string
}

/** The engine for the next stream; no engines given: PocketSphinx's live decoder. */
export function chooseLiveEngine(engines: LiveEngines | undefined): LiveEngineChoice {
  const pocketsphinx = (why: string): LiveEngineChoice => ({ kind: 'pocketsphinx', asr: null, detail: `PocketSphinx's live decoder (${why})` })
  if (!engines) return pocketsphinx('no other engine given')
  if (engines.setting === 'pocketsphinx') return pocketsphinx('NOTESVC_LIVE_ENGINE=pocketsphinx')
  const asr = engines.asr()
  const adapter = SPEECH_ENGINES.find(e => e.name === asr.name)
  if ((asr.name === 'whisper' || asr.name === 'remote') && adapter) {
    const found = adapter.availability(engines.speech, engines.speech.speechSettings[asr.name])
    if (!found.ok) return pocketsphinx(`the speech engine is ${asr.name}, but ${found.missing}`)
    return asr.name === 'whisper'
      ? { kind: 'whisper', asr, detail: `${found.detail}, on a sliding window of ${WHISPER_WINDOW.maxSeconds} s decoded every ${WHISPER_WINDOW.stepSeconds} s` }
      : { kind: 'remote', asr, detail: `${found.detail}, one request per turn (no partials)` }
  }
  return pocketsphinx(`the speech engine is ${asr.name}`)
}

export interface LiveStreamSettings {
  /** null: no detection, turns end only at commit() */
  turnDetection: TurnDetection | null
  /** ISO 639-1, or null to let the engine tell (PocketSphinx hears English only) */
  language: string | null
  /** the session's prompt (whisper.cpp's initial prompt, the remote server's `prompt`) */
  prompt: string | null
}

/** A recognizer for one stream (16 kHz pcm16 in), on the engine chooseLiveEngine picks now. */
export function openLiveEngine(engines: LiveEngines | undefined, s: LiveStreamSettings): LiveRecognizer {
  const choice = chooseLiveEngine(engines)
  if (!choice.asr) return openLiveRecognizer({ sampleRate: LIVE_SAMPLE_RATE, turnDetection: s.turnDetection, slots: engines?.slots })
  return openWindowedRecognizer({
    decode: decoderOf(choice.asr, s.language),
    turnDetection: s.turnDetection,
    window: choice.kind === 'whisper' ? WHISPER_WINDOW : null,
    prompt: s.prompt ?? undefined,
  })
}

/** The speech engine's transcribeChunk as a window decoder (whisper.cpp decodes on its own thread). */
function decoderOf(asr: AsrEngine, language: string | null): WindowDecoder {
  return async (samples, prompt) => (await asr.transcribeChunk(samples, { language, ...(prompt ? { prompt } : {}) })).segments
}
