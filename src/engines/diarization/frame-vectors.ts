/** A frame as the builtin diarization's Gaussians see it: its cepstra and pitch, normalised over the recording. */
import { CEPSTRA } from './features'

/**
 * Dimensions of a frame as the speakers' Gaussians see it: the cepstra, then the pitch. Pitch was first
 * only in the windows' vectors, so resegmentation and the merging by BIC, on cepstra alone, could not
 * tell a high voice from a low one of like timbre (bench/README.md "Issue 25 session").
 */
export const D = CEPSTRA + 1
/** Frames either side (0.15 s) whose voiced pitch a frame without one borrows. */
const PITCH_REACH = 15

/**
 * Each frame's cepstra followed by its pitch (log2 Hz). A frame without a pitch of its own (a
 * consonant, a pause) gets the mean pitch of the voiced frames within PITCH_REACH of it, else the
 * recording's mean voiced pitch: the speaker's pitch goes on through the consonants between vowels.
 */
export function withPitch(cepstra: Float32Array, pitch: Float32Array, frames: number): Float32Array {
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

/**
 * Frame features (D per frame) with the recording's mean removed and unit variance over its speech
 * (the microphone's colour removed).
 */
export function normalise(features: Float32Array, frames: number, speech: Uint8Array): Float32Array {
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

