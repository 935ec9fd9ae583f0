/**
 * Where in a stretch of audio there is sound: for the words the dictionary lacks, which take the
 * sound between their aligned neighbours, not the pauses around it.
 */
import { FRAME_RATE } from '../pocketsphinx/decoder'

const SAMPLES_PER_FRAME = 16_000 / FRAME_RATE
/** Louder than the quietest tenth of the segment by this much is sound (the LibriVox clips' noise sits within 6 dB of their floor). */
const ABOVE_FLOOR_DB = 12

export interface Levels {
  /** each 10-ms frame's level in dB */
  db: Float64Array
  /** the level above which a frame is sound */
  threshold: number
}

export function frameLevels(samples: Int16Array): Levels {
  const n = Math.floor(samples.length / SAMPLES_PER_FRAME)
  const db = new Float64Array(n)
  for (let f = 0; f < n; f++) {
    let sum = 0
    for (let i = f * SAMPLES_PER_FRAME; i < (f + 1) * SAMPLES_PER_FRAME; i++) sum += samples[i]! ** 2
    db[f] = 10 * Math.log10(sum / SAMPLES_PER_FRAME + 1)
  }
  const sorted = Float64Array.from(db).sort()
  return { db, threshold: (sorted[Math.floor(n * 0.1)] ?? 0) + ABOVE_FLOOR_DB }
}

/** Quiet this long or shorter inside a word is part of it (a stop's closure, a breath between syllables). */
const BRIDGED_FRAMES = 10

/**
 * The longest stretch of sound in [start, end] (seconds), quiet of up to 100 ms inside it bridged: the
 * unknown word, without the pauses around it or the last few milliseconds of a neighbour the
 * alignment cut short. The whole of [start, end] when none of it is sound.
 */
export function soundSpan(levels: Levels, start: number, end: number): [number, number] {
  const from = Math.max(0, Math.floor(start * FRAME_RATE))
  const to = Math.min(levels.db.length, Math.ceil(end * FRAME_RATE))
  let best: [number, number] | null = null
  let run: [number, number] | null = null
  for (let f = from; f < to; f++) {
    if (levels.db[f]! < levels.threshold) continue
    if (run && f - run[1] <= BRIDGED_FRAMES) run[1] = f + 1
    else run = [f, f + 1]
    if (!best || run[1] - run[0] > best[1] - best[0]) best = [run[0], run[1]]
  }
  if (!best) return [start, end]
  return [Math.max(start, best[0] / FRAME_RATE), Math.min(end, best[1] / FRAME_RATE)]
}
