/** The windows of speech the builtin diarization clusters: 1.5 s every 0.25 s, each a unit vector of its voice. */
import { unit } from './cluster'
import { CEPSTRA, FRAMES_PER_SECOND } from './features'
import { D } from './frame-vectors'

const WINDOW = 1.5
const STEP = 0.25
/** A window needs this share of speech frames to describe a voice. */
const MIN_WINDOW_SPEECH = 0.4

export interface Window {
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
export function describeWindows(cepstra: Float32Array, pitch: Float32Array, speech: Uint8Array, frames: number): Window[] {
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

/** The speech frames of the middle STEP of each window labelled with the window's cluster; the rest -1. */
export function middleLabels(speech: Uint8Array, windows: Window[], windowLabels: number[]): Int32Array {
  const labels = new Int32Array(speech.length).fill(-1)
  const step = Math.round(STEP * FRAMES_PER_SECOND)
  windows.forEach((w, i) => {
    const middle = Math.floor((w.from + w.to) / 2)
    for (let t = middle - Math.floor(step / 2); t < middle + Math.ceil(step / 2); t++) if (speech[t]) labels[t] = windowLabels[i]!
  })
  return labels
}
