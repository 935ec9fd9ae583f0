/**
 * Live transcription with an engine that decodes whole pieces of audio rather than frame by frame
 * (whisper.cpp, a remote OpenAI-compatible server): the same recognizer interface as the PocketSphinx
 * engine (index.ts), the same turn detection (turns.ts), and `decode(samples, prompt)` for the engine.
 *
 * - With a `window` (whisper.cpp): while a turn goes on, every `stepSeconds` of new audio the turn's
 *   last `maxSeconds` at most are decoded again; words two consecutive decodes agree on are committed
 *   (agreement.ts, LocalAgreement-2) and each partial is the committed words then the provisional
 *   tail. At the turn's end the whole turn is decoded once more and that is its final. A decode still
 *   running when the next step is due is not queued behind: the next decode takes the audio as it is
 *   when the running one ends, so an engine slower than real time shows partials less often, never
 *   later and later.
 * - Without (the remote engine, whose server does not stream): no partials; the turn is decoded once
 *   when it ends (its audio sent as one WAV) and that is its final.
 *
 * Decoding runs off the event loop (whisper.cpp's own thread in its addon; the remote server); only
 * turn detection (an energy sum per 10-ms frame) runs here. Events come out in order, one decode at a
 * time per stream: a turn's final always comes before the next turn's first event.
 */
import { LocalAgreement, wordsOf, type TimedText } from './agreement'
import { FrameBuffer, TurnDetector, VAD_FRAME, type TurnDetection } from './turns'
import type { LiveEvent } from './events'
import { LIVE_SAMPLE_RATE, LiveInputError, MAX_PUSH_SAMPLES, type LiveRecognizer } from './index'

const RATE = 16_000
/** A turn longer than this is ended anyway: its final is one decode, and whisper.cpp hears 30 s at a time. */
const MAX_TURN_SECONDS = 30
/** How much text before the window is given to the engine as its prompt (whisper_streaming's 200). */
const PROMPT_CHARS = 200

/** Decodes 16 kHz mono samples in [-1, 1]; `prompt` is the text said just before them (may be ''). */
export type WindowDecoder = (samples: Float32Array, prompt: string) => Promise<TimedText[]>

export interface SlidingWindow {
  /** the most audio decoded for a partial, seconds */
  maxSeconds: number
  /** how much new audio calls for the next decode, seconds */
  stepSeconds: number
}

export interface WindowedSettings {
  decode: WindowDecoder
  /** null: no detection, a turn ends only at commit() */
  turnDetection: TurnDetection | null
  /** null: no partials, one decode per turn at its end */
  window: SlidingWindow | null
  /** the session's own prompt (names, spelling), put before the text said so far */
  prompt?: string
}

interface Turn {
  item: number
  /** stream position (samples) of its first sample */
  startSample: number
  audio: Int16Array[]
  samples: number
  /** turn position (samples) where the window for partials starts */
  windowStart: number
  /** turn samples when the last partial decode began */
  decodedAt: number
  decoding: boolean
  agreement: LocalAgreement
  lastPartial: string
  /** segment ends (turn seconds) of the last hypothesis: where the window may move to */
  segmentEnds: number[]
}

class WindowedSession {
  #settings: WindowedSettings
  #detector: TurnDetector | null
  #emit: (e: LiveEvent) => void
  #position = 0
  #frames = new FrameBuffer()
  #prefix: Int16Array[] = []
  #turn: Turn | null = null
  #items = 0
  /** the finals' text so far, for the next decodes' prompt */
  #said = ''
  #work: Promise<void> = Promise.resolve()
  #failed = false

  constructor(settings: WindowedSettings, emit: (e: LiveEvent) => void) {
    this.#settings = settings
    this.#detector = settings.turnDetection ? new TurnDetector(settings.turnDetection) : null
    this.#emit = emit
  }

  push(pcm: Int16Array): void {
    if (this.#failed) return
    for (const frame of this.#frames.frames(pcm)) this.#frame(frame)
  }

  /** Ends the turn in progress now (its final follows); without one, an empty final for a new item. */
  commit(): void {
    if (this.#failed) return
    const frame = this.#turn ? this.#frames.takePadded() : null
    if (frame) {
      this.#position += VAD_FRAME
      this.#add(frame)
    }
    this.#frames.clear()
    this.#detector?.reset()
    if (this.#turn) return this.#end()
    const at = round(this.#position / RATE)
    const item = this.#items++
    this.#then(() => this.#emit({ type: 'final', item, text: '', start: at, end: at, words: [] }))
  }

  /** Ends the turn in progress (its final is sent) and resolves once every decode is done. */
  async close(): Promise<void> {
    if (this.#turn) this.commit()
    await this.#work
  }

  #frame(frame: Int16Array): void {
    this.#position += frame.length
    if (!this.#detector) {
      this.#turn ??= this.#start(this.#position - frame.length)
      this.#add(frame)
      // no commit for MAX_TURN_SECONDS: the turn ends anyway, so its audio is never held without bound
      if (this.#turn.samples >= MAX_TURN_SECONDS * RATE) this.#end()
      return
    }
    const event = this.#detector.frame(frame)
    if (!this.#turn) {
      this.#prefix.push(frame)
      if (this.#prefix.length > this.#detector.prefixFrames + 3) this.#prefix.shift()
      if (event !== 'start') return
      const padding = this.#prefix.reduce((n, f) => n + f.length, 0)
      this.#turn = this.#start(this.#position - padding)
      for (const f of this.#prefix) this.#add(f)
      this.#prefix = []
      return
    }
    this.#add(frame)
    if (event === 'end' || this.#turn.samples >= MAX_TURN_SECONDS * RATE) {
      const item = this.#turn.item
      const at = Math.round((this.#position / RATE) * 1000)
      this.#then(() => this.#emit({ type: 'speechStopped', item, audioEndMs: at }))
      this.#detector.reset()
      this.#end()
    }
  }

  #start(startSample: number): Turn {
    const item = this.#items++
    if (this.#detector) {
      const at = Math.round((startSample / RATE) * 1000)
      this.#then(() => this.#emit({ type: 'speechStarted', item, audioStartMs: at }))
    }
    return { item, startSample, audio: [], samples: 0, windowStart: 0, decodedAt: 0, decoding: false, agreement: new LocalAgreement(), lastPartial: '', segmentEnds: [] }
  }

  #add(frame: Int16Array): void {
    const turn = this.#turn!
    turn.audio.push(frame)
    turn.samples += frame.length
    const w = this.#settings.window
    if (!w || turn.decoding || turn.samples - turn.decodedAt < w.stepSeconds * RATE) return
    turn.decoding = true
    this.#then(() => this.#partial(turn))
  }

  /** Decodes the turn's window as it is now; commits what the last two decodes agree on; sends the partial. */
  async #partial(turn: Turn): Promise<void> {
    if (this.#turn !== turn) return
    const w = this.#settings.window!
    this.#slide(turn, w)
    turn.decodedAt = turn.samples
    const offset = turn.windowStart / RATE
    const segments = await this.#settings.decode(samplesOf(turn.audio, turn.windowStart, turn.samples), this.#prompt(turn))
    turn.decoding = false
    turn.segmentEnds = segments.map(s => offset + s.end)
    turn.agreement.insert(wordsOf(segments, offset))
    const text = turn.agreement.text()
    if (!text || text === turn.lastPartial) return
    turn.lastPartial = text
    this.#emit({ type: 'partial', item: turn.item, text })
  }

  /**
   * Keeps the window at most `maxSeconds`: it moves up to the end of the last segment wholly committed
   * (whisper_streaming's rule: a segment's end is a boundary the engine itself chose), else to the
   * last committed word's end, else (nothing committed) to the newest `maxSeconds`.
   */
  #slide(turn: Turn, w: SlidingWindow): void {
    const max = Math.round(w.maxSeconds * RATE)
    if (turn.samples - turn.windowStart <= max) return
    const committed = turn.agreement.committedUntil
    const boundary = turn.segmentEnds.filter(e => e <= committed + 0.01).at(-1) ?? committed
    const to = Math.round(boundary * RATE)
    turn.windowStart = to > turn.windowStart && turn.samples - to <= max ? to : turn.samples - max
  }

  /** The session's prompt, then the last PROMPT_CHARS of what was said before the window. */
  #prompt(turn: Turn | null): string {
    const before = turn ? turn.agreement.committed.filter(w => w.end <= turn.windowStart / RATE + 0.01).map(w => w.text).join(' ') : ''
    const all = `${this.#said} ${before}`.trim()
    // cut at a word: the first word of a text cut short is a fragment
    const said = all.length > PROMPT_CHARS ? all.slice(-PROMPT_CHARS).replace(/^\S*\s*/, '') : all
    return [this.#settings.prompt ?? '', said].filter(Boolean).join(' ')
  }

  /** The turn ends: the whole of it decoded once more, its final sent. */
  #end(): void {
    const turn = this.#turn!
    this.#turn = null
    this.#then(async () => {
      const prompt = this.#prompt(null)
      const segments = turn.samples ? await this.#settings.decode(samplesOf(turn.audio, 0, turn.samples), prompt) : []
      const text = segments.map(s => s.text.trim()).filter(Boolean).join(' ')
      if (text) this.#said = `${this.#said} ${text}`.slice(-PROMPT_CHARS * 2)
      // words: the route reads a final's text and times; word times come with the note's batch transcription
      this.#emit({ type: 'final', item: turn.item, text, start: round(turn.startSample / RATE), end: round((turn.startSample + turn.samples) / RATE), words: [] })
    })
  }

  /** Runs `task` after every earlier one; a failure is the stream's `error` event and stops it. */
  #then(task: () => void | Promise<void>): void {
    this.#work = this.#work.then(async () => {
      if (this.#failed) return
      try {
        await task()
      } catch (err) {
        this.#failed = true
        this.#turn = null
        this.#emit({ type: 'error', message: err instanceof Error ? err.message : String(err) })
      }
    })
  }
}

/** Samples [from, to) of a turn's frames, as floats in [-1, 1]. */
function samplesOf(frames: readonly Int16Array[], from: number, to: number): Float32Array {
  const out = new Float32Array(to - from)
  let at = 0
  for (const f of frames) {
    const a = Math.max(from - at, 0)
    const b = Math.min(to - at, f.length)
    for (let i = a; i < b; i++) out[at + i - from] = f[i]! / 32768
    at += f.length
    if (at >= to) break
  }
  return out
}

const round = (s: number) => Math.round(s * 1000) / 1000

/** A windowed recognizer: the LiveRecognizer interface (index.ts) over a WindowedSession. */
export function openWindowedRecognizer(settings: WindowedSettings): LiveRecognizer {
  const listeners: Array<(e: LiveEvent) => void> = []
  const session = new WindowedSession(settings, e => {
    for (const l of listeners) l(e)
  })
  let closing: Promise<void> | null = null
  const usable = (what: string) => {
    if (closing) throw new LiveInputError(`cannot ${what}: this live recognizer is closed; open a new one`)
  }
  queueMicrotask(() => {
    for (const l of listeners) l({ type: 'ready' })
  })
  return {
    on: listener => void listeners.push(listener),
    push(pcm16) {
      usable('push audio')
      if (!(pcm16 instanceof Int16Array) || pcm16.length === 0 || pcm16.length > MAX_PUSH_SAMPLES) {
        throw new LiveInputError(`a push carries 1 to ${MAX_PUSH_SAMPLES} samples (up to 10 s) of 16-bit PCM at ${LIVE_SAMPLE_RATE} Hz mono in an Int16Array; split longer audio`)
      }
      session.push(pcm16)
    },
    commit() {
      usable('commit')
      session.commit()
    },
    close: () => (closing ??= session.close()),
  }
}
