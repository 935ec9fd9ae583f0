/**
 * Server-side turn detection (what OpenAI's realtime `server_vad` does): speech opens a turn, and
 * `silenceDurationMs` of silence closes it; `prefixPaddingMs` of audio before the speech is kept so a
 * word's soft start is not cut. Energy-based on the PCM, 10-ms frames: a frame is speech when its level
 * stands `threshold`-dependent decibels above a running noise floor (and above an absolute floor, so
 * digital silence and hiss never open a turn).
 *
 * Why not PocketSphinx's own detector (`-remove_silence`): it drops the frames it takes for silence
 * (word times then skip the pauses, which a live transcript's times must not), its parameters are in
 * frames and log-energy units with no `threshold` to map to, and it cannot be asked to end a turn
 * after N ms; this one is 60 lines, pure and testable without the library.
 */

/** 10 ms at 16 kHz: the unit in which speech and silence are counted. */
export const VAD_FRAME = 160

/**
 * Audio as it arrives, cut into VAD_FRAME frames: a push of any length gives the whole frames it
 * completes; what is left waits for the next push (or is taken at a commit).
 */
export class FrameBuffer {
  #remainder = new Int16Array(0)

  frames(pcm: Int16Array): Int16Array[] {
    let samples = pcm
    if (this.#remainder.length) {
      samples = new Int16Array(this.#remainder.length + pcm.length)
      samples.set(this.#remainder)
      samples.set(pcm, this.#remainder.length)
    }
    const whole = samples.length - (samples.length % VAD_FRAME)
    const out: Int16Array[] = []
    for (let at = 0; at < whole; at += VAD_FRAME) out.push(samples.slice(at, at + VAD_FRAME))
    this.#remainder = samples.slice(whole)
    return out
  }

  /** what is left (shorter than a frame), padded with silence to a frame; null when nothing is left */
  takePadded(): Int16Array | null {
    if (!this.#remainder.length) return null
    const frame = new Int16Array(VAD_FRAME)
    frame.set(this.#remainder)
    this.#remainder = new Int16Array(0)
    return frame
  }

  clear(): void {
    this.#remainder = new Int16Array(0)
  }
}

export interface TurnDetection {
  /** 0 to 1 (OpenAI's meaning: higher needs louder speech); default 0.5 */
  threshold: number
  /** audio kept before the detected start of speech, ms; default 300 */
  prefixPaddingMs: number
  /** silence that ends a turn, ms; default 500 */
  silenceDurationMs: number
}

export const DEFAULT_TURN_DETECTION: TurnDetection = { threshold: 0.5, prefixPaddingMs: 300, silenceDurationMs: 500 }

/** Frames of speech in a row that open a turn (a click or a cough shorter than this does not). */
const ONSET_FRAMES = 3
/** Below this level (dBFS) a frame is silence whatever the noise floor. */
const ABSOLUTE_FLOOR_DB = -55
/** How fast the noise floor may rise while the level stays above it (dB per frame: 5 dB a second). */
const FLOOR_RISE_DB = 0.05

function levelDb(frame: Int16Array): number {
  let sum = 0
  for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!
  const rms = Math.sqrt(sum / Math.max(frame.length, 1)) / 32768
  return rms > 0 ? Math.max(-100, 20 * Math.log10(rms)) : -100
}

export type TurnEvent = 'start' | 'end' | null

/** Frame by frame (VAD_FRAME samples each): says when a turn starts and when it ends. */
export class TurnDetector {
  #marginDb: number
  #silenceFrames: number
  #floorDb = -70
  #speechRun = 0
  #silenceRun = 0
  #inTurn = false

  constructor(readonly settings: TurnDetection) {
    this.#marginDb = 6 + 24 * settings.threshold
    this.#silenceFrames = Math.max(1, Math.round(settings.silenceDurationMs / 10))
  }

  get prefixFrames(): number {
    return Math.round(this.settings.prefixPaddingMs / 10)
  }

  get inTurn(): boolean {
    return this.#inTurn
  }

  /** One frame: 'start' on the frame that confirms speech, 'end' on the frame that completes the silence. */
  frame(samples: Int16Array): TurnEvent {
    const db = levelDb(samples)
    this.#floorDb = db < this.#floorDb ? db : this.#floorDb + FLOOR_RISE_DB
    const speech = db > ABSOLUTE_FLOOR_DB && db > this.#floorDb + this.#marginDb
    if (speech) {
      this.#speechRun++
      this.#silenceRun = 0
    } else {
      this.#speechRun = 0
      this.#silenceRun++
    }
    if (!this.#inTurn && this.#speechRun >= ONSET_FRAMES) {
      this.#inTurn = true
      return 'start'
    }
    if (this.#inTurn && this.#silenceRun >= this.#silenceFrames) {
      this.#inTurn = false
      return 'end'
    }
    return null
  }

  /** The turn was ended from outside (a commit): wait for new speech. */
  reset(): void {
    this.#inTurn = false
    this.#speechRun = 0
  }
}
