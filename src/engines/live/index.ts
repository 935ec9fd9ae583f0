/**
 * Live transcription: the engine a streaming route calls. One recognizer per stream:
 *
 *   const r = openLiveRecognizer({ sampleRate: 16000 })
 *   r.on(event => …)            // ready, speechStarted, partial, speechStopped, final, error
 *   r.push(pcm16)                // as audio arrives: 16 kHz mono Int16Array, any length up to 10 s
 *   r.commit()                   // ends the utterance in progress now (its final follows)
 *   await r.close()              // ends the utterance in progress (its final is sent), frees the decoder
 *
 * Decoding (PocketSphinx's library, its language model) runs in a Worker of the stream's own
 * (live-thread.ts), never on the event loop; push() only checks and transfers the samples. Partials
 * come every `partialIntervalMs` of audio while someone speaks (when the hypothesis changed); a
 * final carries each word's times (seconds from the stream's first sample) and posterior confidence.
 * Turns end by server-side voice-activity detection (turns.ts), or only by commit() when
 * `turnDetection` is null. docs/decisions.md, "Live transcription: the engine".
 *
 * Given the process's ASR slots (`slots`), the stream decodes only under a slot, a few hundred ms of
 * audio at a time (slot-feed.ts), sharing the cores with the batch jobs by the scheduler's rule
 * (engines/asr/scheduler.ts); without them, its thread decodes whenever audio comes.
 */
import { DEFAULT_TURN_DETECTION, type TurnDetection } from './turns'
import type { SessionSettings } from './session'
import type { DecoderOptions } from '../pocketsphinx/decoder'
import type { LiveEvent } from './events'
import type { AsrScheduler } from '../asr/scheduler'
import { SlotFeed, type FeedMessage } from './slot-feed'

export type { LiveEvent } from './events'

const THREAD_ENTRY = Bun.main.startsWith('/$bunfs/')
  ? new URL('./engines/live/live-thread.ts', Bun.pathToFileURL(Bun.main)).href
  : new URL('./live-thread.ts', import.meta.url).href

/** The only rate the engine decodes (PocketSphinx's en-us model); a route resamples other rates first. */
export const LIVE_SAMPLE_RATE = 16_000
/** The most one push() may carry: 10 s of audio. */
export const MAX_PUSH_SAMPLES = 10 * LIVE_SAMPLE_RATE

export interface LiveRecognizerOptions {
  sampleRate: number
  /** null: no detection, an utterance ends only at commit(); default DEFAULT_TURN_DETECTION */
  turnDetection?: Partial<TurnDetection> | null
  /** how often, in ms of audio, the hypothesis is read for a partial; default 160 */
  partialIntervalMs?: number
  decoder?: DecoderOptions
  /** the process's ASR slots (one scheduler per process, the batch jobs' own); default: decoding is not gated */
  slots?: AsrScheduler
}

export interface LiveRecognizer {
  on(listener: (event: LiveEvent) => void): void
  push(pcm16: Int16Array): void
  commit(): void
  close(): Promise<void>
}

/** Audio or options the engine cannot take; the message says what to send instead. */
export class LiveInputError extends Error {}

function turnSettings(t: Partial<TurnDetection> | null | undefined): TurnDetection | null {
  if (t === null) return null
  const s = { ...DEFAULT_TURN_DETECTION, ...t }
  if (!(s.threshold >= 0 && s.threshold <= 1)) throw new LiveInputError(`turnDetection.threshold must be between 0 and 1, not ${s.threshold}`)
  for (const k of ['prefixPaddingMs', 'silenceDurationMs'] as const) {
    if (!(Number.isFinite(s[k]) && s[k] >= 0 && s[k] <= 10_000)) throw new LiveInputError(`turnDetection.${k} must be between 0 and 10000 ms, not ${s[k]}`)
  }
  return s
}

export function openLiveRecognizer(opts: LiveRecognizerOptions): LiveRecognizer {
  if (opts.sampleRate !== LIVE_SAMPLE_RATE) {
    throw new LiveInputError(`live audio must be 16-bit PCM at ${LIVE_SAMPLE_RATE} Hz mono, not ${opts.sampleRate} Hz; resample it first`)
  }
  const settings: SessionSettings = {
    turnDetection: turnSettings(opts.turnDetection),
    partialIntervalMs: opts.partialIntervalMs ?? 160,
    decoder: opts.decoder,
  }
  const listeners: Array<(e: LiveEvent) => void> = []
  let closing: Promise<void> | null = null
  let onClosed = () => {}
  let dead = false
  const worker = new Worker(THREAD_ENTRY)
  const post = (m: FeedMessage | { type: 'sync' }) => worker.postMessage(m, m.type === 'audio' ? [m.pcm.buffer as ArrayBuffer] : [])
  const feed = opts.slots ? new SlotFeed(opts.slots, post) : null
  const send = (m: FeedMessage) => (feed ? feed.send(m) : post(m))
  worker.onmessage = (e: MessageEvent<LiveEvent | { type: 'closed' } | { type: 'synced' }>) => {
    if (e.data.type === 'synced') return feed?.decoded()
    if (e.data.type === 'closed') return onClosed()
    if (e.data.type === 'ready' || e.data.type === 'error') feed?.start()
    for (const l of listeners) l(e.data)
  }
  worker.onerror = e => {
    dead = true
    feed?.stop()
    for (const l of listeners) l({ type: 'error', message: e.message || 'the live transcription thread failed' })
    onClosed()
  }
  worker.postMessage({ type: 'open', settings })

  const usable = (what: string) => {
    if (closing) throw new LiveInputError(`cannot ${what}: this live recognizer is closed; open a new one`)
  }
  return {
    on(listener) {
      listeners.push(listener)
    },
    push(pcm16) {
      usable('push audio')
      if (!(pcm16 instanceof Int16Array)) {
        throw new LiveInputError(`live audio must be an Int16Array of 16-bit PCM samples at ${LIVE_SAMPLE_RATE} Hz mono, not ${Object.prototype.toString.call(pcm16).slice(8, -1)}`)
      }
      if (pcm16.length === 0 || pcm16.length > MAX_PUSH_SAMPLES) {
        throw new LiveInputError(`a push carries 1 to ${MAX_PUSH_SAMPLES} samples (up to 10 s), not ${pcm16.length}; split longer audio`)
      }
      send({ type: 'audio', pcm: pcm16.slice() })
    },
    commit() {
      usable('commit')
      send({ type: 'commit' })
    },
    close() {
      closing ??= new Promise<void>(resolve => {
        onClosed = () => {
          feed?.stop()
          worker.terminate()
          resolve()
        }
        if (dead) onClosed()
        else send({ type: 'close' })
      })
      return closing
    },
  }
}
