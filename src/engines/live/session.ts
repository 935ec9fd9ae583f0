/**
 * One live stream's decoding, synchronous: audio in as it arrives, events out. Runs inside the
 * stream's Worker (live-thread.ts); kept apart from the thread so it can be read (and tested) alone.
 *
 * The decoder hears only turns: while no one speaks, the last `prefixPaddingMs` of audio is kept and
 * nothing is decoded; when the detector (turns.ts) hears speech, an utterance starts with that padding,
 * every frame after it is decoded as it comes, the hypothesis is read every `partialIntervalMs` of
 * audio and sent when it changed, and the silence (or a commit) ends the utterance with its words,
 * times counted from the stream's first sample, and posteriors.
 */
import { POCKETSPHINX_MODEL, PocketsphinxDecoder, type DecoderOptions } from '../pocketsphinx/decoder'
import { FrameBuffer, TurnDetector, VAD_FRAME, type TurnDetection } from './turns'
import { LIVE_DECODER_SETTINGS } from './settings'
import type { LiveEvent, LiveWord } from './events'

const RATE = 16_000
/** A turn longer than this is ended anyway: one search over minutes of noise would grow without bound. */
const MAX_UTTERANCE_SAMPLES = 60 * RATE
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+|\(NULL\))$/

export interface SessionSettings {
  /** null: no detection, one utterance from the first audio to each commit() */
  turnDetection: TurnDetection | null
  partialIntervalMs: number
  /** its `settings` are laid over LIVE_DECODER_SETTINGS (settings.ts) */
  decoder?: DecoderOptions
}

interface Utterance {
  item: number
  /** stream position (samples) of its first sample */
  startSample: number
  fed: number
  /** samples the decoder had heard before it: the library counts a word's frames from the stream's start */
  decodedBefore: number
  fedAtLastHyp: number
  lastHyp: string
}

export class LiveSession {
  #decoder: PocketsphinxDecoder
  #detector: TurnDetector | null
  #partialSamples: number
  #emit: (e: LiveEvent) => void
  /** samples received in whole frames */
  #position = 0
  #frames = new FrameBuffer()
  #prefix: Int16Array[] = []
  #utterance: Utterance | null = null
  #items = 0
  #decoded = 0

  constructor(settings: SessionSettings, emit: (e: LiveEvent) => void) {
    this.#decoder = PocketsphinxDecoder.open({
      ...settings.decoder,
      lm: settings.decoder?.lm ?? POCKETSPHINX_MODEL.lm,
      vad: false,
      settings: { ...LIVE_DECODER_SETTINGS, ...settings.decoder?.settings },
    })
    this.#decoder.startStream()
    this.#detector = settings.turnDetection ? new TurnDetector(settings.turnDetection) : null
    this.#partialSamples = Math.max(VAD_FRAME, Math.round((settings.partialIntervalMs / 1000) * RATE))
    this.#emit = emit
  }

  push(pcm: Int16Array): void {
    for (const frame of this.#frames.frames(pcm)) this.#frame(frame)
  }

  #frame(frame: Int16Array): void {
    const at = this.#position
    this.#position += frame.length
    if (!this.#detector) {
      this.#utterance ??= this.#start(at)
      this.#feed(frame)
      // no detection: a client that never commits still gets a final every MAX_UTTERANCE_SAMPLES
      if (this.#utterance.fed >= MAX_UTTERANCE_SAMPLES) this.#finish()
      return
    }
    const turn = this.#detector.frame(frame)
    if (!this.#utterance) {
      this.#prefix.push(frame)
      if (this.#prefix.length > this.#detector.prefixFrames + 3) this.#prefix.shift()
      if (turn !== 'start') return
      const padding = this.#prefix.reduce((n, f) => n + f.length, 0)
      this.#emit({ type: 'speechStarted', item: this.#items, audioStartMs: Math.round(((this.#position - padding) / RATE) * 1000) })
      this.#utterance = this.#start(this.#position - padding)
      for (const f of this.#prefix) this.#feed(f)
      this.#prefix = []
      return
    }
    this.#feed(frame)
    if (turn === 'end' || this.#utterance.fed >= MAX_UTTERANCE_SAMPLES) {
      this.#emit({ type: 'speechStopped', item: this.#utterance.item, audioEndMs: Math.round((this.#position / RATE) * 1000) })
      this.#finish()
      this.#detector.reset()
    }
  }

  #start(startSample: number): Utterance {
    this.#decoder.start()
    return { item: this.#items++, startSample, fed: 0, decodedBefore: this.#decoded, fedAtLastHyp: 0, lastHyp: '' }
  }

  #feed(frame: Int16Array): void {
    const u = this.#utterance!
    this.#decoder.process(frame)
    u.fed += frame.length
    this.#decoded += frame.length
    if (u.fed - u.fedAtLastHyp < this.#partialSamples) return
    u.fedAtLastHyp = u.fed
    const text = this.#decoder.partial() ?? ''
    if (text === u.lastHyp || text === '') return
    u.lastHyp = text
    this.#emit({ type: 'partial', item: u.item, text })
  }

  /**
   * Ends the utterance in progress now (its final is sent). Without one, an empty final comes for a
   * new item: a client that commits is owed an answer for that turn (OpenAI's .completed).
   */
  commit(): void {
    if (!this.#endInProgress()) {
      const at = round(this.#position / RATE)
      this.#emit({ type: 'final', item: this.#items++, text: '', start: at, end: at, words: [] })
    }
  }

  /** Ends the utterance in progress (its final is sent); false when there was none. */
  #endInProgress(): boolean {
    // a remainder shorter than a frame is part of what was said: padded with silence to a frame
    const frame = this.#utterance ? this.#frames.takePadded() : null
    if (frame) {
      this.#position += VAD_FRAME
      this.#feed(frame)
    }
    const open = this.#utterance !== null
    if (open) this.#finish()
    this.#detector?.reset()
    return open
  }

  #finish(): void {
    const u = this.#utterance!
    this.#utterance = null
    this.#decoder.end()
    const offset = (u.startSample - u.decodedBefore) / RATE
    const words: LiveWord[] = this.#decoder.segments()
      .filter(w => !FILLER.test(w.word))
      .map(w => ({ word: w.word.replace(/\(\d+\)$/, ''), start: round(offset + w.start), end: round(offset + w.end), confidence: w.posterior }))
    this.#emit({
      type: 'final',
      item: u.item,
      text: words.map(w => w.word).join(' '),
      start: round(u.startSample / RATE),
      end: round((u.startSample + u.fed) / RATE),
      words,
    })
  }

  /** Ends the utterance in progress (its final is sent) and frees the decoder. */
  close(): void {
    try {
      this.#endInProgress()
    } finally {
      this.#decoder.free()
    }
  }
}

const round = (s: number) => Math.round(s * 1000) / 1000
