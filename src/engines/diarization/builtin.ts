import { agglomerate, dot, unit } from './cluster'
import type { Diarization, DiarizationEngine, DiarizationSession, DiarizeOptions, SpeakerHint } from './engine'
import { FRAMES_PER_SECOND, FrameFeatures } from './features'
import { normalise, withPitch } from './frame-vectors'
import { bestMerge, bic, relabelFrames } from './speaker-gaussians'
import { findSpeech, MIN_TURN, numberTurns, toTurns } from './speech-frames'
import { describeWindows, middleLabels, type Window } from './speech-windows'
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

/** Windows clustered at most; the others are assigned to the nearest cluster. */
const MAX_CLUSTERED = 500
/** The most speakers counted without a hint. */
const MAX_ESTIMATED = 8

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

/** A few rounds of k-means over all windows from the given centroids; labels without gaps. */
function refine(vectors: Float32Array[], centroids: Float32Array[]): number[] {
  let labels: number[] = []
  for (let round = 0; round < 3; round++) {
    labels = vectors.map(v => nearest(v, centroids))
    centroids = centroidsOf(vectors, labels, centroids)
  }
  return compact(labels)
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
