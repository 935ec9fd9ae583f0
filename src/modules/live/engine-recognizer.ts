/**
 * The real streaming engine behind /v1/realtime: a LiveRecognizerFactory over the live engine that
 * engines/live/engines.ts picks for each stream (PocketSphinx's live decoder, whisper.cpp on a sliding
 * window, or the remote server per turn; PocketSphinx when no engines are given). The client's pcm16
 * (24 kHz by OpenAI's default, or 16 kHz) is resampled to the engine's 16 kHz as it arrives; the
 * session's server_vad settings become the engine's turn detection (none: turns end only at commits);
 * the engine's events become the route's.
 */
import { createResampler } from '../../engines/live/resample'
import { LIVE_SAMPLE_RATE, MAX_PUSH_SAMPLES } from '../../engines/live'
import { openLiveEngine, type LiveEngines } from '../../engines/live/engines'
import type { LiveEvent } from '../../engines/live'
import type { LiveRecognizer, LiveRecognizerFactory, RecognizerEvent } from './recognizer'

export function engineRecognizers(engines?: LiveEngines): LiveRecognizerFactory {
  return (config, emit: (e: RecognizerEvent) => void): LiveRecognizer => {
    const vad = config.turnDetection
    const engine = openLiveEngine(engines, {
      turnDetection: vad ? { threshold: vad.threshold, prefixPaddingMs: vad.prefixPaddingMs, silenceDurationMs: vad.silenceDurationMs } : null,
      language: config.language,
      prompt: config.prompt,
    })
    const resampler = createResampler(config.sampleRate, LIVE_SAMPLE_RATE)
    /** utterances (engine items) whose text the client cleared: their partials and final are dropped */
    const cleared = new Set<number>()
    /** the engine's utterance in progress, as far as its events have told */
    let lastFinal = -1
    let odd: number | null = null

    engine.on((e: LiveEvent) => {
      switch (e.type) {
        case 'speechStarted':
          return emit({ kind: 'speech_started', turn: e.item, at: e.audioStartMs / 1000 })
        case 'speechStopped':
          return cleared.has(e.item) ? undefined : emit({ kind: 'speech_stopped', turn: e.item, at: e.audioEndMs / 1000 })
        case 'partial':
          return cleared.has(e.item) ? undefined : emit({ kind: 'partial', turn: e.item, text: e.text })
        case 'final':
          lastFinal = e.item
          if (cleared.delete(e.item)) return
          return emit({ kind: 'final', turn: e.item, text: e.text, start: e.start, end: e.end })
        case 'error':
          return emit({ kind: 'failed', message: e.message })
      }
    })

    /** bytes to samples: a byte left over (an odd length) waits for the next push */
    function samplesOf(pcm: Uint8Array): Int16Array {
      const bytes = odd === null ? pcm : Uint8Array.of(odd, ...pcm)
      odd = bytes.length % 2 ? bytes[bytes.length - 1]! : null
      const whole = bytes.length - (bytes.length % 2)
      const view = new DataView(bytes.buffer, bytes.byteOffset, whole)
      const out = new Int16Array(whole / 2)
      for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true)
      return out
    }

    return {
      push(pcm) {
        const samples = resampler.push(samplesOf(pcm))
        for (let at = 0; at < samples.length; at += MAX_PUSH_SAMPLES) engine.push(samples.subarray(at, at + MAX_PUSH_SAMPLES))
      },
      commit: () => engine.commit(),
      clear() {
        // the engine's next final is for the utterance in progress, or (none) an empty one: dropped
        cleared.add(lastFinal + 1)
        engine.commit()
      },
      close: () => engine.close(),
    }
  }
}
