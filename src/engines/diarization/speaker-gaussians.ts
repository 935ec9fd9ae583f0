/** The builtin diarization's speakers as full-covariance Gaussians of their frames: BIC, merging, resegmentation. */
import { determinant, inverse, Matrix } from 'ml-matrix'
import { FRAMES_PER_SECOND } from './features'
import { foldShortRuns, MIN_TURN } from './speech-frames'
import { D } from './frame-vectors'

/** Frame scores are averaged over this long before choosing the speaker of a frame. */
const SMOOTH = 0.3

/**
 * How strongly BIC must favour two speakers over one before they stay apart after resegmentation.
 * 3 split one reader of 60-120 s into 3-4 "speakers" (bench/diarization.ts "1 speaker": 29 % DER, the
 * LibriVox reader as 2); 4 keeps him one (18 %) with the 2-speaker set unchanged (7.1 %) and the
 * 4-speaker set a little worse (30.0 → 32.8 %): a memo split among invented speakers is the error a
 * reader sees first.
 */
const MERGE_PENALTY = 4

/** The pair of speakers whose merging most improves BIC (scaled as `bic` is), or null when none does. */
export function bestMerge(cepstra: Float32Array, labels: Int32Array, k: number): [number, number] | null {
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

/**
 * Weight of the BIC penalty when choosing the count of clusters (low: it may find too many, which the
 * merging after resegmentation, at MERGE_PENALTY, takes back). Both tuned on bench/diarization.ts:
 * higher under-counts the 4-speaker set, lower over-counts the 2-speaker set.
 */
const BIC_PENALTY = 2
/** The length every recording's BIC is scaled to (about 60 s of speech). */
const BIC_FRAMES = 4000

/** The log-likelihood of the speech frames under a full Gaussian per speaker, less the BIC penalty for its parameters. */
export function bic(cepstra: Float32Array, labels: Int32Array, k: number): number {
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

/**
 * Every speech frame's speaker, by resegmentation: a full-covariance Gaussian of each speaker's
 * frames (at first the frames in the middle of its windows, then the frames it was given), each
 * frame's log-likelihoods averaged over SMOOTH seconds of speech, the best taken, runs shorter than
 * MIN_TURN (counted in speech frames) folded into a neighbour; RESEGMENT rounds.
 */
export function relabelFrames(cepstra: Float32Array, speech: Uint8Array, initial: Int32Array, k: number): Int32Array {
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
