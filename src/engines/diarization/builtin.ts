import { determinant, inverse, Matrix } from 'ml-matrix'
import { agglomerate, dot, unit } from './cluster'
import type { Diarization, DiarizationEngine, DiarizationSession, DiarizeOptions, SpeakerHint } from './engine'
import { CEPSTRA, FRAMES_PER_SECOND, FrameFeatures } from './features'
import { findSpeech, foldShortRuns, MIN_TURN, numberTurns, toTurns } from './speech-frames'
import { voicePrints } from './voice-print'

/**
 * The default speaker diarization: no model to download, plain arithmetic on the spectrum, so it runs
 * wherever notesvc runs (about 0.01× real time on one core of this 2-core machine).
 *
 * How: MFCCs and pitch every 10 ms as samples arrive (features.ts); speech found by loudness
 * (speech-frames.ts); windows of 1.5 s every 0.25 s summarised as the mean and spread of their
 * cepstra and pitch (normalised over the recording); the windows clustered by cosine similarity (cluster.ts) into
 * the count of speakers that BIC prefers (or the count the submitter gave); every frame re-labelled by
 * a full-covariance Gaussian of each speaker's frames (cepstra and pitch), smoothed over 0.3 s, turns shorter than half a
 * second folded into their neighbours; then speakers merged while BIC says one Gaussian explains two.
 *
 * What it can do (bench/diarization.ts, made-up conversations of real and synthetic voices, turns of
 * 1–2 s): about 6–7 % DER with two speakers, about 26–34 % with four. It tells apart voices that
 * sound different — people recorded on different microphones, men and women, synthetic voices. What
 * it cannot: voices that sound alike (it has no learned model of speakers, as sherpa-onnx's neural
 * embeddings do), overlapped speech (one speaker per moment), music or loud noise (taken for speech),
 * more than a handful of speakers (it counts at most 8 unhinted, and under-counts from 4 up); its count
 * is a guess that a hint from the submitter beats. Its voice prints (voice-print.ts) are a voice's
 * average spectral shape and pitch: they tell apart voices that sound clearly different across
 * recordings, not voices alike (bench/voices.ts), and are no biometric.
 */
export function createBuiltinDiarizationEngine(): DiarizationEngine {
  return {
    name: 'builtin',
    async ready() {},
    start: () => new BuiltinSession(),
  }
}

const WINDOW = 1.5
const STEP = 0.25
/** A window needs this share of speech frames to describe a voice. */
const MIN_WINDOW_SPEECH = 0.4
/** Windows clustered at most; the others are assigned to the nearest cluster. */
const MAX_CLUSTERED = 500
/** The most speakers counted without a hint. */
const MAX_ESTIMATED = 8
/** Frame scores are averaged over this long before choosing the speaker of a frame. */
const SMOOTH = 0.3

class BuiltinSession implements DiarizationSession {
  private readonly features = new FrameFeatures()

  feed(samples: Float32Array): void {
    this.features.push(samples)
  }

  async finish(opts: DiarizeOptions = {}): Promise<Diarization> {
    opts.signal?.throwIfAborted()
    const f = this.features
    const speech = findSpeech(f.energy.subarray(0, f.frames))
    // the voice is described by the loud frames only: the pauses between words are the room's
    const loud = Uint8Array.from(speech, s => (s === 2 ? 1 : 0))
    const loudFrames = loud.reduce((n, s) => n + s, 0)
    if (loudFrames < MIN_TURN * FRAMES_PER_SECOND) return { turns: [], speakers: 0, embeddings: [], engine: 'builtin' }
    const cepstra = normalise(withPitch(f.cepstra, f.pitch, f.frames), f.frames, loud)
    const windows = describeWindows(cepstra, f.pitch, loud, f.frames)
    const bounds = speakerBounds(opts.speakers, loudFrames / FRAMES_PER_SECOND)
    const labels = windows.length < 2 || bounds.max === 1 ? new Int32Array(f.frames) : spread(speakerLabels(cepstra, loud, windows, bounds), speech)
    opts.signal?.throwIfAborted()
    const { turns, order } = numberTurns(toTurns(labels, speech))
    return {
      turns,
      speakers: order.size,
      embeddings: voicePrints(f, labels, loud, order),
      engine: 'builtin',
    }
  }
}

/** Labels of the loud frames carried into the pauses of speech after them (before them at the start). */
function spread(labels: Int32Array, speech: Uint8Array): Int32Array {
  let last = -1
  for (let t = 0; t < labels.length; t++) {
    if (labels[t]! >= 0) last = labels[t]!
    else if (speech[t]) labels[t] = last
  }
  let next = -1
  for (let t = labels.length - 1; t >= 0; t--) {
    if (labels[t]! >= 0) next = labels[t]!
    else if (speech[t]) labels[t] = next
  }
  return labels
}

/**
 * Frame features (D per frame) with the recording's mean removed and unit variance over its speech
 * (the microphone's colour removed).
 */
function normalise(features: Float32Array, frames: number, speech: Uint8Array): Float32Array {
  const mean = new Float64Array(D)
  const square = new Float64Array(D)
  let n = 0
  for (let t = 0; t < frames; t++) {
    if (!speech[t]) continue
    n++
    for (let c = 0; c < D; c++) {
      const x = features[t * D + c]!
      mean[c]! += x
      square[c]! += x * x
    }
  }
  const out = new Float32Array(frames * D)
  for (let c = 0; c < D; c++) {
    mean[c]! /= n
    const sd = Math.sqrt(Math.max(1e-9, square[c]! / n - mean[c]! ** 2))
    for (let t = 0; t < frames; t++) out[t * D + c] = (features[t * D + c]! - mean[c]!) / sd
  }
  return out
}

/**
 * Dimensions of a frame as the speakers' Gaussians see it: the cepstra, then the pitch. Pitch was first
 * only in the windows' vectors, so resegmentation and the merging by BIC, on cepstra alone, could not
 * tell a high voice from a low one of like timbre (bench/README.md "Issue 25 session").
 */
const D = CEPSTRA + 1
/** Frames either side (0.15 s) whose voiced pitch a frame without one borrows. */
const PITCH_REACH = 15

/**
 * Each frame's cepstra followed by its pitch (log2 Hz). A frame without a pitch of its own (a
 * consonant, a pause) gets the mean pitch of the voiced frames within PITCH_REACH of it, else the
 * recording's mean voiced pitch: the speaker's pitch goes on through the consonants between vowels.
 */
function withPitch(cepstra: Float32Array, pitch: Float32Array, frames: number): Float32Array {
  const out = new Float32Array(frames * D)
  let sum = 0
  let count = 0
  for (let t = 0; t < frames; t++) {
    if (pitch[t]! > 0) {
      sum += pitch[t]!
      count++
    }
  }
  const average = count ? sum / count : 0
  // a running sum over the voiced frames of [t - PITCH_REACH, t + PITCH_REACH]
  let localSum = 0
  let localCount = 0
  for (let t = -PITCH_REACH; t < frames; t++) {
    const enter = t + PITCH_REACH
    if (enter < frames && pitch[enter]! > 0) {
      localSum += pitch[enter]!
      localCount++
    }
    const leave = t - PITCH_REACH - 1
    if (leave >= 0 && pitch[leave]! > 0) {
      localSum -= pitch[leave]!
      localCount--
    }
    if (t < 0) continue
    out.set(cepstra.subarray(t * CEPSTRA, (t + 1) * CEPSTRA), t * D)
    out[t * D + CEPSTRA] = pitch[t]! > 0 ? pitch[t]! : localCount ? localSum / localCount : average
  }
  return out
}

interface Window {
  /** first and one-past-last frame */
  from: number
  to: number
  vector: Float32Array
}

/** Dimensions of a window's vector: mean and spread of the cepstra, mean and spread of the pitch. */
const DIMS = 2 * CEPSTRA + 2
/** Weight of the two pitch dimensions against the 24 cepstral ones (each scaled to unit spread first). */
const PITCH_WEIGHT = 2

/** Windows of WINDOW seconds every STEP seconds that hold enough speech, each as a unit vector. */
function describeWindows(cepstra: Float32Array, pitch: Float32Array, speech: Uint8Array, frames: number): Window[] {
  const length = Math.round(WINDOW * FRAMES_PER_SECOND)
  const step = Math.round(STEP * FRAMES_PER_SECOND)
  const windows: (Window & { voiced: number })[] = []
  let pitchSum = 0
  let voicedTotal = 0
  for (let from = 0; from < frames; from += step) {
    const to = Math.min(frames, from + length)
    const v = new Float32Array(DIMS)
    let n = 0
    let voiced = 0
    for (let t = from; t < to; t++) {
      if (!speech[t]) continue
      n++
      for (let c = 0; c < CEPSTRA; c++) {
        const x = cepstra[t * D + c]!
        v[c]! += x
        v[CEPSTRA + c]! += x * x
      }
      const p = pitch[t]!
      if (p > 0) {
        voiced++
        v[2 * CEPSTRA]! += p
        v[2 * CEPSTRA + 1]! += p * p
      }
    }
    if (n < MIN_WINDOW_SPEECH * length) {
      if (to === frames) break
      continue
    }
    for (let c = 0; c < CEPSTRA; c++) {
      v[c]! /= n
      v[CEPSTRA + c] = Math.sqrt(Math.max(0, v[CEPSTRA + c]! / n - v[c]! ** 2))
    }
    if (voiced) {
      pitchSum += v[2 * CEPSTRA]!
      voicedTotal += voiced
      v[2 * CEPSTRA]! /= voiced
      v[2 * CEPSTRA + 1] = Math.sqrt(Math.max(0, v[2 * CEPSTRA + 1]! / voiced - v[2 * CEPSTRA]! ** 2))
    }
    windows.push({ from, to, vector: v, voiced })
    if (to === frames) break
  }
  // a window with hardly any voiced frames says nothing of pitch: it gets the recording's average
  const averagePitch = voicedTotal ? pitchSum / voicedTotal : 0
  for (const w of windows) {
    if (w.voiced >= MIN_VOICED) continue
    w.vector[2 * CEPSTRA] = averagePitch
    w.vector[2 * CEPSTRA + 1] = 0
  }
  // each dimension centred and scaled over the windows, so that cosine compares deviations from the recording's average voice
  for (let d = 0; d < DIMS; d++) {
    let sum = 0
    let square = 0
    for (const w of windows) {
      sum += w.vector[d]!
      square += w.vector[d]! ** 2
    }
    const mean = sum / windows.length
    const sd = Math.sqrt(Math.max(1e-9, square / windows.length - mean * mean))
    const weight = d >= 2 * CEPSTRA ? PITCH_WEIGHT : 1
    for (const w of windows) w.vector[d] = ((w.vector[d]! - mean) / sd) * weight
  }
  for (const w of windows) unit(w.vector)
  return windows
}

/** Voiced frames a window needs for its pitch to count. */
const MIN_VOICED = 10

function speakerBounds(hint: SpeakerHint | undefined, loudSeconds: number): { min: number; max: number } {
  if (hint?.exact) return { min: hint.exact, max: hint.exact }
  const min = Math.max(1, hint?.min ?? 1)
  // Without a count, each speaker found must have about SPEECH_PER_SPEAKER seconds of loud speech to
  // be told apart: a 6-s memo of one voice was found as 3 speakers of 2 s each (docs/examples/hello.wav)
  const supported = Math.max(1, Math.floor(loudSeconds / SPEECH_PER_SPEAKER))
  return { min, max: Math.max(min, Math.min(hint?.max ?? 32, supported)) }
}

/** Seconds of loud speech each speaker needs for the engine to count them unasked (see speakerBounds). */
const SPEECH_PER_SPEAKER = 4

/**
 * Each frame's speaker (-1 outside speech). The windows are clustered (a sample of at most
 * MAX_CLUSTERED agglomerated, then every window given its nearest centroid) and the frames
 * resegmented from that. Without an exact count, every count in the bounds is tried and the one with
 * the best BIC kept: a full-covariance Gaussian of each speaker's frames, penalised for its parameters.
 */
function speakerLabels(cepstra: Float32Array, speech: Uint8Array, windows: Window[], bounds: { min: number; max: number }): Int32Array {
  const vectors = windows.map(w => w.vector)
  const every = Math.ceil(vectors.length / MAX_CLUSTERED)
  const sample = vectors.filter((_, i) => i % every === 0)
  const exact = bounds.min === bounds.max
  const max = Math.min(bounds.max, sample.length, exact ? Infinity : MAX_ESTIMATED)
  const min = Math.min(bounds.min, max)
  let best: number[] = []
  let bestScore = -Infinity
  for (let k = min; k <= max; k++) {
    const windowLabels = refine(vectors, centroidsOf(sample, agglomerate(sample, k)))
    if (exact) {
      best = windowLabels
      break
    }
    const clusters = Math.max(...windowLabels) + 1
    const score = bic(cepstra, middleLabels(speech, windows, windowLabels), clusters)
    if (score > bestScore) [best, bestScore] = [windowLabels, score]
  }
  let clusters = Math.max(...best) + 1
  if (clusters === 1) return Int32Array.from(speech, s => (s ? 0 : -1))
  let labels = relabelFrames(cepstra, speech, middleLabels(speech, windows, best), clusters)
  if (exact) return labels
  // the two speakers whose frames are best explained by one Gaussian merge while BIC says so
  while (clusters > min) {
    const pair = bestMerge(cepstra, labels, clusters)
    if (!pair) break
    for (let t = 0; t < labels.length; t++) if (labels[t] === pair[1]) labels[t] = pair[0]
    for (let t = 0; t < labels.length; t++) if (labels[t]! > pair[1]) labels[t]!--
    clusters--
    labels = clusters === 1 ? labels : relabelFrames(cepstra, speech, labels, clusters)
  }
  return labels
}

/**
 * How strongly BIC must favour two speakers over one before they stay apart after resegmentation.
 * 3 split one reader of 60-120 s into 3-4 "speakers" (bench/diarization.ts "1 speaker": 29 % DER, the
 * LibriVox reader as 2); 4 keeps him one (18 %) with the 2-speaker set unchanged (7.1 %) and the
 * 4-speaker set a little worse (30.0 → 32.8 %): a memo split among invented speakers is the error a
 * reader sees first.
 */
const MERGE_PENALTY = 4

/** The pair of speakers whose merging most improves BIC (scaled as `bic` is), or null when none does. */
function bestMerge(cepstra: Float32Array, labels: Int32Array, k: number): [number, number] | null {
  const d = D
  const n = new Float64Array(k)
  const sums = Array.from({ length: k }, () => new Float64Array(d))
  const products = Array.from({ length: k }, () => new Float64Array(d * d))
  for (let t = 0; t < labels.length; t++) {
    const c = labels[t]!
    if (c < 0) continue
    n[c]!++
    for (let a = 0; a < d; a++) {
      const x = cepstra[t * d + a]!
      sums[c]![a]! += x
      for (let b = 0; b <= a; b++) products[c]![a * d + b]! += x * cepstra[t * d + b]!
    }
  }
  const total = n.reduce((a, b) => a + b, 0)
  const logLikelihood = (count: number, sum: Float64Array, product: Float64Array) => {
    if (count < 2 * d) return 0
    const cov = Matrix.zeros(d, d)
    for (let a = 0; a < d; a++) {
      for (let b = 0; b <= a; b++) {
        const v = product[a * d + b]! / count - (sum[a]! / count) * (sum[b]! / count) + (a === b ? 0.01 : 0)
        cov.set(a, b, v)
        cov.set(b, a, v)
      }
    }
    return -(count / 2) * Math.log(Math.max(1e-300, determinant(cov)))
  }
  const own = Array.from({ length: k }, (_, c) => logLikelihood(n[c]!, sums[c]!, products[c]!))
  let best: [number, number] | null = null
  let bestGain = 0
  for (let a = 0; a < k; a++) {
    for (let b = a + 1; b < k; b++) {
      const sum = sums[a]!.map((x, i) => x + sums[b]![i]!)
      const product = products[a]!.map((x, i) => x + products[b]![i]!)
      const lost = own[a]! + own[b]! - logLikelihood(n[a]! + n[b]!, sum, product)
      const gain = MERGE_PENALTY * 0.5 * (d + (d * (d + 1)) / 2) * Math.log(BIC_FRAMES) - (lost * BIC_FRAMES) / total
      if (gain > bestGain) [best, bestGain] = [[a, b], gain]
    }
  }
  return best
}

/** The speech frames of the middle STEP of each window labelled with the window's cluster; the rest -1. */
function middleLabels(speech: Uint8Array, windows: Window[], windowLabels: number[]): Int32Array {
  const labels = new Int32Array(speech.length).fill(-1)
  const step = Math.round(STEP * FRAMES_PER_SECOND)
  windows.forEach((w, i) => {
    const middle = Math.floor((w.from + w.to) / 2)
    for (let t = middle - Math.floor(step / 2); t < middle + Math.ceil(step / 2); t++) if (speech[t]) labels[t] = windowLabels[i]!
  })
  return labels
}

/** A few rounds of k-means over all windows from the given centroids; labels without gaps. */
function refine(vectors: Float32Array[], centroids: Float32Array[]): number[] {
  let labels: number[] = []
  for (let round = 0; round < 3; round++) {
    labels = vectors.map(v => nearest(v, centroids))
    centroids = centroidsOf(vectors, labels, centroids)
  }
  return compact(labels)
}

/**
 * Weight of the BIC penalty when choosing the count of clusters (low: it may find too many, which the
 * merging after resegmentation, at MERGE_PENALTY, takes back). Both tuned on bench/diarization.ts:
 * higher under-counts the 4-speaker set, lower over-counts the 2-speaker set.
 */
const BIC_PENALTY = 2
/** The length every recording's BIC is scaled to (about 60 s of speech). */
const BIC_FRAMES = 4000

/** The log-likelihood of the speech frames under a full Gaussian per speaker, less the BIC penalty for its parameters. */
function bic(cepstra: Float32Array, labels: Int32Array, k: number): number {
  const d = D
  const counts = new Float64Array(k)
  for (const l of labels) if (l >= 0) counts[l]!++
  const models = fitGaussians(cepstra, labels, k)
  let total = 0
  let n = 0
  let used = 0
  models.forEach((m, c) => {
    if (!m) return
    used++
    n += counts[c]!
    total -= (counts[c]! / 2) * m.logDet
  })
  // as if every recording had BIC_FRAMES frames: a long recording's likelihood gains grow with its
  // length while the penalty grows with its logarithm, so plain BIC finds more speakers the longer it is
  return (total * BIC_FRAMES) / n - BIC_PENALTY * 0.5 * used * (d + (d * (d + 1)) / 2) * Math.log(BIC_FRAMES)
}

function centroidsOf(vectors: Float32Array[], labels: number[], previous?: Float32Array[]): Float32Array[] {
  const k = previous?.length ?? Math.max(...labels) + 1
  const sums = Array.from({ length: k }, () => new Float32Array(vectors[0]!.length))
  const counts = new Int32Array(k)
  vectors.forEach((v, i) => {
    counts[labels[i]!]!++
    const s = sums[labels[i]!]!
    for (let d = 0; d < v.length; d++) s[d]! += v[d]!
  })
  return sums.map((s, c) => (counts[c] ? unit(s) : previous![c]!))
}

function nearest(v: Float32Array, centroids: Float32Array[]): number {
  let best = 0
  let bestSim = -Infinity
  centroids.forEach((c, i) => {
    const s = dot(v, c)
    if (s > bestSim) [best, bestSim] = [i, s]
  })
  return best
}

/** Labels renumbered 0… without gaps (a centroid that lost all its windows disappears). */
function compact(labels: number[]): number[] {
  const ids = new Map<number, number>()
  return labels.map(l => {
    if (!ids.has(l)) ids.set(l, ids.size)
    return ids.get(l)!
  })
}

/**
 * Every speech frame's speaker, by resegmentation: a full-covariance Gaussian of each speaker's
 * frames (at first the frames in the middle of its windows, then the frames it was given), each
 * frame's log-likelihoods averaged over SMOOTH seconds of speech, the best taken, runs shorter than
 * MIN_TURN (counted in speech frames) folded into a neighbour; RESEGMENT rounds.
 */
function relabelFrames(cepstra: Float32Array, speech: Uint8Array, initial: Int32Array, k: number): Int32Array {
  const frames = speech.length
  const speechIndex: number[] = []
  for (let t = 0; t < frames; t++) if (speech[t]) speechIndex.push(t)
  let labels = initial
  for (let round = 0; round < RESEGMENT; round++) {
    const models = fitGaussians(cepstra, labels, k)
    const next = new Int32Array(frames).fill(-1)
    const score = new Float32Array(speechIndex.length * k)
    const x = new Float64Array(D)
    speechIndex.forEach((t, i) => {
      models.forEach((m, c) => {
        if (!m) {
          score[i * k + c] = -1e9
          return
        }
        for (let d = 0; d < D; d++) x[d] = cepstra[t * D + d]! - m.mean[d]!
        let q = 0
        for (let a = 0; a < D; a++) {
          let row = 0
          for (let b = 0; b < D; b++) row += m.precision[a * D + b]! * x[b]!
          q += x[a]! * row
        }
        score[i * k + c] = -0.5 * (q + m.logDet)
      })
    })
    // running mean over the speech frames only, so silences do not dilute it
    const half = Math.round((SMOOTH * FRAMES_PER_SECOND) / 2)
    const sums = new Float64Array(k)
    let lo = 0
    let hi = 0
    for (let i = 0; i < speechIndex.length; i++) {
      while (hi < speechIndex.length && hi <= i + half) {
        for (let c = 0; c < k; c++) sums[c]! += score[hi * k + c]!
        hi++
      }
      while (lo < i - half) {
        for (let c = 0; c < k; c++) sums[c]! -= score[lo * k + c]!
        lo++
      }
      let best = 0
      for (let c = 1; c < k; c++) if (sums[c]! > sums[best]!) best = c
      next[speechIndex[i]!] = best
    }
    foldShortRuns(next, speechIndex, Math.round(MIN_TURN * FRAMES_PER_SECOND))
    labels = next
  }
  return labels
}

/** Rounds of resegmentation. */
const RESEGMENT = 4

interface Gaussian {
  mean: Float64Array
  /** the inverse covariance, row after row */
  precision: Float64Array
  logDet: number
}

/** A full-covariance Gaussian of the frames of each label (null for a label with too few frames). */
function fitGaussians(cepstra: Float32Array, labels: Int32Array, k: number): (Gaussian | null)[] {
  const d = D
  const sums = Array.from({ length: k }, () => new Float64Array(d))
  const products = Array.from({ length: k }, () => new Float64Array(d * d))
  const counts = new Float64Array(k)
  for (let t = 0; t < labels.length; t++) {
    const c = labels[t]!
    if (c < 0) continue
    counts[c]!++
    for (let a = 0; a < d; a++) {
      const x = cepstra[t * d + a]!
      sums[c]![a]! += x
      for (let b = 0; b <= a; b++) products[c]![a * d + b]! += x * cepstra[t * d + b]!
    }
  }
  return sums.map((sum, c) => {
    const m = counts[c]!
    if (m < 2 * d) return null
    const mean = sum.map(x => x / m)
    const cov = Matrix.zeros(d, d)
    for (let a = 0; a < d; a++) {
      for (let b = 0; b <= a; b++) {
        const v = products[c]![a * d + b]! / m - mean[a]! * mean[b]! + (a === b ? 0.01 : 0)
        cov.set(a, b, v)
        cov.set(b, a, v)
      }
    }
    const precision = Float64Array.from(inverse(cov).to1DArray())
    return { mean, precision, logDet: Math.log(Math.max(1e-300, determinant(cov))) }
  })
}
