import FFT from 'fft.js'
import { SAMPLE_RATE } from './engine'

/** Frames of 25 ms every 10 ms, the usual analysis for speech. */
const FRAME_SAMPLES = 400
export const HOP_SAMPLES = 160
export const FRAMES_PER_SECOND = SAMPLE_RATE / HOP_SAMPLES
/** Cepstral coefficients kept per frame (c1…c12; c0 is loudness, kept apart as the frame's energy). */
export const CEPSTRA = 12
/**
 * Voice prints have cepstra of their own (voice-print.ts): of the mel bands up to about 4.2 kHz only (the
 * 20 lowest of 26), where a voice is well above hiss and where the microphone colours it least, with
 * every band floored at PRINT_FLOOR_DB below the frame's strongest one (softly: the floor's power is
 * added), so that hiss in the valleys between formants looks the same in a quiet and in a noisy room.
 */
const PRINT_BANDS = 20
const PRINT_FLOOR_DB = 20

const FFT_SIZE = 512
const MEL_BANDS = 26
const LOW_HZ = 60
const HIGH_HZ = 7600
const PRE_EMPHASIS = 0.97
/** Pitch: lags of 400 Hz down to 70 Hz, zero-padded so the circular autocorrelation does not wrap. */
const PITCH_FFT_SIZE = 1024
const MIN_LAG = Math.floor(SAMPLE_RATE / 400)
const MAX_LAG = Math.ceil(SAMPLE_RATE / 70)
/** A frame is voiced when its normalised autocorrelation peak reaches this. */
const VOICING = 0.5
/** A shorter period whose peak reaches this share of the best peak is the pitch (against octave errors). */
const OCTAVE_TOLERANCE = 0.9

/**
 * MFCCs computed as samples arrive: 16 kHz mono in any block sizes, out come per 10-ms frame its
 * log energy, 12 cepstra, its pitch and the 12 cepstra voice prints are made of. Only the last partial frame of
 * samples is kept, so memory grows with the frames (26 floats per 10 ms, about 37 MB an hour), not with the
 * PCM (230 MB an hour).
 */
export class FrameFeatures {
  /** log10 of the mean squared sample of each frame */
  energy = new Float32Array(1024)
  /** CEPSTRA per frame, frame after frame */
  cepstra = new Float32Array(1024 * CEPSTRA)
  /** log2 of the frame's pitch in Hz, 0 for frames without a clear one (unvoiced, silence) */
  pitch = new Float32Array(1024)
  /** CEPSTRA per frame for voice prints (PRINT_BANDS, floored), frame after frame */
  printCepstra = new Float32Array(1024 * CEPSTRA)
  frames = 0

  private readonly fft = new FFT(FFT_SIZE)
  private readonly pitchFft = new FFT(PITCH_FFT_SIZE)
  private readonly pitchInput = new Float64Array(PITCH_FFT_SIZE)
  private readonly pitchSpectrum: number[]
  private readonly autocorrelation: number[]
  private readonly hann = hann(FRAME_SAMPLES)
  private readonly hannAutocorrelation = windowAutocorrelation(this.hann)
  private readonly input = new Float64Array(FFT_SIZE)
  private readonly spectrum: number[]
  private readonly window = hamming(FRAME_SAMPLES)
  private readonly filters = melFilters()
  private readonly dct = dctMatrix(MEL_BANDS)
  private readonly printDct = dctMatrix(PRINT_BANDS)
  private readonly floored = new Float64Array(PRINT_BANDS)
  private readonly logMel = new Float64Array(MEL_BANDS)
  private pending = new Float32Array(FRAME_SAMPLES + 16_384)
  private pendingLength = 0
  /** the sample before pending[0], for the pre-emphasis of the first frame there */
  private before = 0

  constructor() {
    this.spectrum = this.fft.createComplexArray()
    this.pitchSpectrum = this.pitchFft.createComplexArray()
    this.autocorrelation = this.pitchFft.createComplexArray()
  }

  push(samples: Float32Array): void {
    let from = 0
    while (from < samples.length) {
      const take = Math.min(this.pending.length - this.pendingLength, samples.length - from)
      this.pending.set(samples.subarray(from, from + take), this.pendingLength)
      this.pendingLength += take
      from += take
      let at = 0
      while (at + FRAME_SAMPLES <= this.pendingLength) {
        this.frame(this.pending, at)
        at += HOP_SAMPLES
      }
      if (at > 0) this.before = this.pending[at - 1]!
      this.pending.copyWithin(0, at, this.pendingLength)
      this.pendingLength -= at
    }
  }

  get seconds(): number {
    return this.frames / FRAMES_PER_SECOND
  }

  private frame(samples: Float32Array, at: number): void {
    this.grow()
    let power = 0
    let previous = at > 0 ? samples[at - 1]! : this.before
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      const x = samples[at + i]!
      power += x * x
      this.input[i] = (x - PRE_EMPHASIS * previous) * this.window[i]!
      previous = x
    }
    this.input.fill(0, FRAME_SAMPLES)
    this.fft.realTransform(this.spectrum, this.input)
    for (let b = 0; b < MEL_BANDS; b++) {
      const { first, weights } = this.filters[b]!
      let sum = 0
      for (let k = 0; k < weights.length; k++) {
        const re = this.spectrum[2 * (first + k)]!
        const im = this.spectrum[2 * (first + k) + 1]!
        sum += weights[k]! * (re * re + im * im)
      }
      this.logMel[b] = Math.log(sum + 1e-10)
    }
    const out = this.frames * CEPSTRA
    for (let c = 0; c < CEPSTRA; c++) {
      let sum = 0
      const row = this.dct[c]!
      for (let b = 0; b < MEL_BANDS; b++) sum += row[b]! * this.logMel[b]!
      this.cepstra[out + c] = sum
    }
    this.printCepstraOf(out)
    this.energy[this.frames] = Math.log10(power / FRAME_SAMPLES + 1e-12)
    this.pitch[this.frames] = this.pitchOf(samples, at)
    this.frames++
  }

  /** The print's cepstra of the frame's log mel energies (see PRINT_BANDS), written at `out`. */
  private printCepstraOf(out: number): void {
    let strongest = -Infinity
    for (let b = 0; b < PRINT_BANDS; b++) strongest = Math.max(strongest, this.logMel[b]!)
    const floor = strongest - (PRINT_FLOOR_DB / 10) * Math.LN10
    for (let b = 0; b < PRINT_BANDS; b++) {
      const x = this.logMel[b]!
      const high = Math.max(x, floor)
      this.floored[b] = high + Math.log(Math.exp(x - high) + Math.exp(floor - high))
    }
    for (let c = 0; c < CEPSTRA; c++) {
      let sum = 0
      const row = this.printDct[c]!
      for (let b = 0; b < PRINT_BANDS; b++) sum += row[b]! * this.floored[b]!
      this.printCepstra[out + c] = sum
    }
  }

  /**
   * The frame's pitch by autocorrelation (Boersma's method: the Hann-windowed frame's autocorrelation
   * divided by the window's own, its peaks between 70 and 400 Hz), as log2 Hz; 0 when the highest peak is
   * under VOICING of the frame's power. The pitch is the shortest period whose peak reaches
   * OCTAVE_TOLERANCE of the highest: taking the highest alone put a tenth to a half of a woman's
   * voiced frames an octave down, at a man's pitch (espeak-ng en+f3: 10th percentile 85 Hz, 174 Hz with it).
   */
  private pitchOf(samples: Float32Array, at: number): number {
    let mean = 0
    for (let i = 0; i < FRAME_SAMPLES; i++) mean += samples[at + i]!
    mean /= FRAME_SAMPLES
    for (let i = 0; i < FRAME_SAMPLES; i++) this.pitchInput[i] = (samples[at + i]! - mean) * this.hann[i]!
    this.pitchInput.fill(0, FRAME_SAMPLES)
    this.pitchFft.realTransform(this.pitchSpectrum, this.pitchInput)
    this.pitchFft.completeSpectrum(this.pitchSpectrum)
    for (let k = 0; k < PITCH_FFT_SIZE; k++) {
      const re = this.pitchSpectrum[2 * k]!
      const im = this.pitchSpectrum[2 * k + 1]!
      this.pitchSpectrum[2 * k] = re * re + im * im
      this.pitchSpectrum[2 * k + 1] = 0
    }
    this.pitchFft.inverseTransform(this.autocorrelation, this.pitchSpectrum)
    const r0 = this.autocorrelation[0]!
    if (!(r0 > 1e-9)) return 0
    let best = 0
    const normalised = (lag: number) => this.autocorrelation[2 * lag]! / r0 / this.hannAutocorrelation[lag]!
    // a peak, not the slope down from lag 0
    const peak = (lag: number, r: number) => r > normalised(lag - 1) && r >= normalised(lag + 1)
    for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
      const r = normalised(lag)
      if (r > best && peak(lag, r)) best = r
    }
    if (best < VOICING) return 0
    // the shortest period nearly as strong as the best: a voice repeats at twice and three times its
    // period too, and a high voice's double period often correlates as well as its own
    for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
      const r = normalised(lag)
      if (r >= OCTAVE_TOLERANCE * best && peak(lag, r)) return Math.log2(SAMPLE_RATE / lag)
    }
    return 0
  }

  private grow(): void {
    if (this.frames < this.energy.length) return
    const energy = new Float32Array(this.energy.length * 2)
    energy.set(this.energy)
    this.energy = energy
    const pitch = new Float32Array(this.pitch.length * 2)
    pitch.set(this.pitch)
    this.pitch = pitch
    const cepstra = new Float32Array(this.cepstra.length * 2)
    cepstra.set(this.cepstra)
    this.cepstra = cepstra
    const printCepstra = new Float32Array(this.printCepstra.length * 2)
    printCepstra.set(this.printCepstra)
    this.printCepstra = printCepstra
  }
}

function hann(n: number): Float64Array {
  const w = new Float64Array(n)
  for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1))
  return w
}

/** The window's autocorrelation normalised to 1 at lag 0, up to MAX_LAG + 1. */
function windowAutocorrelation(w: Float64Array): Float64Array {
  const out = new Float64Array(MAX_LAG + 2)
  for (let lag = 0; lag <= MAX_LAG + 1; lag++) {
    let s = 0
    for (let i = 0; i + lag < w.length; i++) s += w[i]! * w[i + lag]!
    out[lag] = s
  }
  const r0 = out[0]!
  for (let lag = 0; lag <= MAX_LAG + 1; lag++) out[lag]! /= r0
  return out
}

function hamming(n: number): Float64Array {
  const w = new Float64Array(n)
  for (let i = 0; i < n; i++) w[i] = 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (n - 1))
  return w
}

const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700)
const hz = (m: number) => 700 * (10 ** (m / 2595) - 1)

/** Triangular filters evenly spaced on the mel scale, each as its first FFT bin and weights. */
function melFilters(): { first: number; weights: Float64Array }[] {
  const points = Array.from({ length: MEL_BANDS + 2 }, (_, i) => hz(mel(LOW_HZ) + ((mel(HIGH_HZ) - mel(LOW_HZ)) * i) / (MEL_BANDS + 1)))
  const binHz = SAMPLE_RATE / FFT_SIZE
  return Array.from({ length: MEL_BANDS }, (_, b) => {
    const [lo, mid, hi] = [points[b]!, points[b + 1]!, points[b + 2]!]
    const first = Math.ceil(lo / binHz)
    const last = Math.floor(hi / binHz)
    const weights = new Float64Array(Math.max(0, last - first + 1))
    for (let k = first; k <= last; k++) {
      const f = k * binHz
      weights[k - first] = f <= mid ? (f - lo) / (mid - lo) : (hi - f) / (hi - mid)
    }
    return { first, weights }
  })
}

/** DCT-II rows 1…CEPSTRA of `bands` log energies (row 0, the mean log energy, is dropped). */
function dctMatrix(bands: number): Float64Array[] {
  return Array.from({ length: CEPSTRA }, (_, c) => {
    const row = new Float64Array(bands)
    for (let b = 0; b < bands; b++) row[b] = Math.sqrt(2 / bands) * Math.cos((Math.PI * (c + 1) * (b + 0.5)) / bands)
    return row
  })
}
